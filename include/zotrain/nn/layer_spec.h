// The description of one layer, kept apart from its execution: a model is a list of these plus
// its parameters. Sizes that follow from the input (in_features, in_channels) are not stored.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zotrain/nn/layer.h"

namespace zotrain {

enum class Op {
  kLinear,
  kConv2d,
  kReLU,
  kMaxPool2d,
  kAvgPool2d,
  kFlatten,
  kBatchNorm,
  kGlobalMaxPool,
  kDropout,
  kReLU6,
  kGlobalAvgPool,
  kResidual,
  kCount  // not an op: the number of them (nn/op_table.cpp has a row for each)
};

struct LayerSpec {
  Op op;
  int64_t out = 0;     // linear: out_features; conv2d: out_channels
  int64_t kernel = 0;  // conv2d, pooling: square kernel size
  int64_t stride = 1;  // conv2d, pooling
  int64_t pad = 0;     // conv2d
  // conv2d: channels fall into `groups` groups, each group of outputs seeing only its group of
  // inputs; groups == in channels == out channels is a depthwise convolution.
  int64_t groups = 1;
  uint32_t drop_below = 0;  // dropout: rate * 2^32 (see nn/dropout.h), integer for the int8 path
  // conv2d: whether it adds a bias; a conv followed by batch norm goes without, since the norm
  // subtracts any constant (and a zeroth-order perturbation of it would only add noise).
  bool bias = true;
  // residual (nn/residual.h): y = post(main(x) + shortcut(x)), an empty shortcut being the
  // identity and post a ReLU when post_relu, else nothing.
  std::vector<LayerSpec> main{}, shortcut{};
  bool post_relu = false;

  static LayerSpec linear(int64_t out) { return {Op::kLinear, out}; }
  static LayerSpec conv2d(int64_t out, int64_t kernel, int64_t stride = 1, int64_t pad = 0,
                          int64_t groups = 1, bool bias = true) {
    LayerSpec s{Op::kConv2d, out, kernel, stride, pad, groups};
    s.bias = bias;
    return s;
  }
  static LayerSpec relu() { return {Op::kReLU}; }
  static LayerSpec relu6() { return {Op::kReLU6}; }
  static LayerSpec max_pool(int64_t kernel) { return {Op::kMaxPool2d, 0, kernel, kernel}; }
  // Overlapping or padded windows (ResNet's 3x3 of stride 2, padding 1).
  static LayerSpec max_pool(int64_t kernel, int64_t stride, int64_t pad) {
    return {Op::kMaxPool2d, 0, kernel, stride, pad};
  }
  static LayerSpec avg_pool(int64_t kernel) { return {Op::kAvgPool2d, 0, kernel, kernel}; }
  static LayerSpec flatten() { return {Op::kFlatten}; }
  static LayerSpec batch_norm() { return {Op::kBatchNorm}; }
  static LayerSpec global_max_pool() { return {Op::kGlobalMaxPool}; }
  static LayerSpec global_avg_pool() { return {Op::kGlobalAvgPool}; }
  // InputError unless 0 <= rate < 1.
  static LayerSpec dropout(double rate);
  static LayerSpec residual(std::vector<LayerSpec> main, std::vector<LayerSpec> shortcut,
                            bool post_relu);
};

const char* op_name(Op op);
// Builds the layer for `spec` given its input shape (batch dimension included, any batch).
// Throws InputError when the spec does not fit the input.
std::unique_ptr<Layer> make_layer(const LayerSpec& spec, const Shape& in);

}  // namespace zotrain
