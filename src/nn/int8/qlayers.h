// Internal to src/nn/int8: the integer layers, one file each, built by make_qlayer.
#pragma once

#include <memory>

#include "zotrain/nn/int8/qlayer.h"

namespace zotrain::int8 {

std::unique_ptr<QLayer> make_linear(int64_t in_features, int64_t out_features);
std::unique_ptr<QLayer> make_conv2d(const Shape& in, const LayerSpec& spec);
std::unique_ptr<QLayer> make_relu();
std::unique_ptr<QLayer> make_max_pool2d(int64_t kernel, int64_t stride);
std::unique_ptr<QLayer> make_flatten();

// Activations and errors go back to int8 with round-to-nearest shifts (NITI's RoundShift).
inline constexpr int kMantissaBits = 7;

}  // namespace zotrain::int8
