// A trained model out of zotrain: a checkpoint's model written as an ONNX file (models/onnx.h),
// for the CLI's `zotrain export` and the library.
#pragma once

#include <string>

#include "zotrain/train/checkpoint.h"

namespace zotrain {

// Writes the model of `ckpt` to `out` as ONNX, f32: an f32 run's parameters, a NITI int8 run's
// weights dequantized (mantissa × 2^exponent; its layers have no biases, exported as zeros), an
// int8-npu run's float master weights and folded biases (a folded batch norm exported as the
// identity plus the bias). InputError for an integer batch norm (NITI int8). Returns one line
// saying what was written and how inputs are normalized.
std::string export_onnx(const Checkpoint& ckpt, const std::string& out);

}  // namespace zotrain
