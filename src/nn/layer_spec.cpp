#include "zotrain/nn/layer_spec.h"

#include "nn/avg_pool2d.h"
#include "nn/batch_norm.h"
#include "nn/conv2d.h"
#include "nn/dropout.h"
#include "nn/flatten.h"
#include "nn/global_avg_pool.h"
#include "nn/global_max_pool.h"
#include "nn/linear.h"
#include "nn/max_pool2d.h"
#include "nn/relu.h"
#include "nn/residual.h"
#include "zotrain/core/error.h"

namespace zotrain {

namespace {

// Throws InputError "<op> on input <shape>: <problem>" unless `ok`.
void require(bool ok, const LayerSpec& spec, const Shape& in, const std::string& problem) {
  if (!ok)
    throw InputError(std::string(op_name(spec.op)) + " on input " + in.str() + ": " + problem);
}

// Checks what every spatial layer needs: an [N, C, H, W] input, a positive kernel and stride,
// and a kernel that fits in the (padded) input.
void require_spatial(const LayerSpec& spec, const Shape& in) {
  require(in.rank == 4, spec, in, "needs an input [N, C, H, W]");
  require(in[1] > 0 && in[2] > 0 && in[3] > 0, spec, in, "has an empty dimension");
  require(spec.kernel > 0, spec, in, "kernel must be positive, got " + std::to_string(spec.kernel));
  require(spec.stride > 0, spec, in, "stride must be positive, got " + std::to_string(spec.stride));
  require(spec.pad >= 0, spec, in, "padding must not be negative, got " + std::to_string(spec.pad));
  require(spec.kernel <= in[2] + 2 * spec.pad && spec.kernel <= in[3] + 2 * spec.pad, spec, in,
          "kernel " + std::to_string(spec.kernel) + " is larger than the input padded by " +
              std::to_string(spec.pad));
}

void require_out(const LayerSpec& spec, const Shape& in) {
  require(spec.out > 0, spec, in, "output size must be positive, got " + std::to_string(spec.out));
}

}  // namespace

LayerSpec LayerSpec::dropout(double rate) {
  if (!(rate >= 0 && rate < 1))
    throw InputError("dropout rate must be in [0, 1), got " + std::to_string(rate));
  LayerSpec s{Op::kDropout};
  s.drop_below = dropout_threshold(rate);
  return s;
}

LayerSpec LayerSpec::residual(std::vector<LayerSpec> main, std::vector<LayerSpec> shortcut,
                              bool post_relu) {
  LayerSpec s{Op::kResidual};
  s.main = std::move(main);
  s.shortcut = std::move(shortcut);
  s.post_relu = post_relu;
  return s;
}

const char* op_name(Op op) {
  switch (op) {
    case Op::kLinear:
      return "linear";
    case Op::kConv2d:
      return "conv2d";
    case Op::kReLU:
      return "relu";
    case Op::kMaxPool2d:
      return "max_pool2d";
    case Op::kAvgPool2d:
      return "avg_pool2d";
    case Op::kFlatten:
      return "flatten";
    case Op::kBatchNorm:
      return "batch_norm";
    case Op::kGlobalMaxPool:
      return "global_max_pool";
    case Op::kDropout:
      return "dropout";
    case Op::kReLU6:
      return "relu6";
    case Op::kGlobalAvgPool:
      return "global_avg_pool";
    case Op::kResidual:
      return "residual";
  }
  return "unknown";
}

std::unique_ptr<Layer> make_layer(const LayerSpec& spec, const Shape& in) {
  require(in.rank >= 1, spec, in, "needs an input with a batch dimension");
  switch (spec.op) {
    case Op::kLinear:
      require(in.rank >= 2 && in.row_numel() > 0, spec, in, "needs a non-empty input [N, ...]");
      require_out(spec, in);
      return std::make_unique<Linear>(in.row_numel(), spec.out);
    case Op::kConv2d:
      require_spatial(spec, in);
      require_out(spec, in);
      require(spec.groups > 0 && in[1] % spec.groups == 0 && spec.out % spec.groups == 0, spec, in,
              "groups " + std::to_string(spec.groups) + " must divide both the input channels " +
                  std::to_string(in[1]) + " and the output channels " + std::to_string(spec.out));
      return std::make_unique<Conv2d>(in[1], spec.out, spec.kernel, spec.stride, spec.pad,
                                      spec.groups, spec.bias);
    case Op::kReLU:
      return std::make_unique<ReLU>();
    case Op::kReLU6:
      return std::make_unique<ReLU>(6.0f);
    case Op::kMaxPool2d:
    case Op::kAvgPool2d:
      require(spec.pad == 0, spec, in, "padding is not supported");
      require_spatial(spec, in);
      if (spec.op == Op::kMaxPool2d) return std::make_unique<MaxPool2d>(spec.kernel, spec.stride);
      return std::make_unique<AvgPool2d>(spec.kernel, spec.stride);
    case Op::kFlatten:
      require(in.rank >= 2, spec, in, "needs an input [N, ...]");
      return std::make_unique<Flatten>();
    case Op::kBatchNorm:
      require(in.rank == 2 || in.rank == 4, spec, in, "needs an input [N, C] or [N, C, H, W]");
      require(in[1] > 0 && in.row_numel() > 0, spec, in, "has an empty dimension");
      return std::make_unique<BatchNorm>(in[1]);
    case Op::kGlobalMaxPool:
    case Op::kGlobalAvgPool:
      require(in.rank >= 3, spec, in, "needs an input [N, C, ...] with positions to pool over");
      require(in.row_numel() > 0, spec, in, "has an empty dimension");
      if (spec.op == Op::kGlobalMaxPool) return std::make_unique<GlobalMaxPool>();
      return std::make_unique<GlobalAvgPool>();
    case Op::kDropout:
      return std::make_unique<Dropout>(spec.drop_below);
    case Op::kResidual:
      return std::make_unique<Residual>(spec, in);
  }
  throw InputError("unknown layer op " + std::to_string(static_cast<int>(spec.op)));
}

}  // namespace zotrain
