#include "zotrain/nn/int8/qlayer.h"

#include "qlayers.h"
#include "zotrain/core/error.h"

namespace zotrain {

std::unique_ptr<QLayer> make_qlayer(const LayerSpec& spec, const Shape& in) {
  switch (spec.op) {
    case Op::kLinear:
      return int8::make_linear(in.row_numel(), spec.out);
    case Op::kConv2d:
      if (spec.groups == 1) return int8::make_conv2d(in, spec);
      throw InputError("layer conv2d with groups " + std::to_string(spec.groups) +
                       " has no integer (int8) path; use --precision f32");
    case Op::kReLU:
      return int8::make_relu();
    case Op::kMaxPool2d:
      return int8::make_max_pool2d(spec.kernel, spec.stride);
    case Op::kFlatten:
      return int8::make_flatten();
    case Op::kGlobalMaxPool:
      return int8::make_global_max_pool();
    case Op::kDropout:
      return int8::make_dropout(spec.drop_below);
    case Op::kBatchNorm:
      throw InputError(
          "layer batch_norm has no integer (int8) path: integer networks go without it, as NITI's "
          "do (use --precision f32, or a model without batch norm such as pointnet:nobn)");
    case Op::kResidual:
      throw InputError(
          "layer residual has no integer (int8) path yet (an NPU-style int8 path for residual "
          "networks is future work); use --precision f32");
    case Op::kAvgPool2d:
    case Op::kReLU6:
    case Op::kGlobalAvgPool:
      break;
  }
  throw InputError(std::string("layer ") + op_name(spec.op) +
                   " has no integer (int8) path; use --precision f32");
}

}  // namespace zotrain
