#include "nn/op_table.h"

#include <iterator>
#include <string>

#include "nn/avg_pool2d.h"
#include "nn/batch_norm.h"
#include "nn/conv2d.h"
#include "nn/dropout.h"
#include "nn/flatten.h"
#include "nn/global_avg_pool.h"
#include "nn/global_max_pool.h"
#include "nn/int8/qlayers.h"
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
    ZT_THROW(InputError(std::string(op_name(spec.op)) + " on input " + in.str() + ": " + problem));
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

// Pooling windows without padding.
// Max pooling may pad (its windows clipped to the input), by less than its kernel; average
// pooling does not.
void require_pool(const LayerSpec& spec, const Shape& in) {
  if (spec.op == Op::kMaxPool2d)
    require(spec.pad < spec.kernel, spec, in,
            "padding " + std::to_string(spec.pad) + " must be below the kernel " +
                std::to_string(spec.kernel) + " (a window of padding alone)");
  else
    require(spec.pad == 0, spec, in, "padding is not supported (average pooling)");
  require_spatial(spec, in);
}

void require_global_pool(const LayerSpec& spec, const Shape& in) {
  require(in.rank >= 3, spec, in, "needs an input [N, C, ...] with positions to pool over");
  require(in.row_numel() > 0, spec, in, "has an empty dimension");
}

using Spec = const LayerSpec&;
using In = const Shape&;

// Indexed by Op, in the enum's order.
constexpr OpRow kOps[] = {
    {Op::kLinear, "linear",
     [](Spec s, In in) -> std::unique_ptr<Layer> {
       require(in.rank >= 2 && in.row_numel() > 0, s, in, "needs a non-empty input [N, ...]");
       require_out(s, in);
       return std::make_unique<Linear>(in.row_numel(), s.out);
     },
     [](Spec s, In in) { return int8::make_linear(in.row_numel(), s.out); }, nullptr},
    {Op::kConv2d, "conv2d",
     [](Spec s, In in) -> std::unique_ptr<Layer> {
       require_spatial(s, in);
       require_out(s, in);
       require(s.groups > 0 && in[1] % s.groups == 0 && s.out % s.groups == 0, s, in,
               "groups " + std::to_string(s.groups) + " must divide both the input channels " +
                   std::to_string(in[1]) + " and the output channels " + std::to_string(s.out));
       return std::make_unique<Conv2d>(in[1], s.out, s.kernel, s.stride, s.pad, s.groups, s.bias);
     },
     [](Spec s, In in) {
       if (s.groups != 1)
         ZT_THROW(InputError("layer conv2d with groups " + std::to_string(s.groups) +
                             " has no integer (int8) path; use --precision f32"));
       return int8::make_conv2d(in, s);
     },
     nullptr},
    {Op::kReLU, "relu", [](Spec, In) -> std::unique_ptr<Layer> { return std::make_unique<ReLU>(); },
     [](Spec, In) { return int8::make_relu(); }, nullptr},
    {Op::kMaxPool2d, "max_pool2d",
     [](Spec s, In in) -> std::unique_ptr<Layer> {
       require_pool(s, in);
       return std::make_unique<MaxPool2d>(s.kernel, s.stride, s.pad);
     },
     [](Spec s, In) { return int8::make_max_pool2d(s.kernel, s.stride, s.pad); }, nullptr},
    {Op::kAvgPool2d, "avg_pool2d",
     [](Spec s, In in) -> std::unique_ptr<Layer> {
       require_pool(s, in);
       return std::make_unique<AvgPool2d>(s.kernel, s.stride);
     },
     nullptr, nullptr},
    {Op::kFlatten, "flatten",
     [](Spec s, In in) -> std::unique_ptr<Layer> {
       require(in.rank >= 2, s, in, "needs an input [N, ...]");
       return std::make_unique<Flatten>();
     },
     [](Spec, In) { return int8::make_flatten(); }, nullptr},
    {Op::kBatchNorm, "batch_norm",
     [](Spec s, In in) -> std::unique_ptr<Layer> {
       require(in.rank == 2 || in.rank == 4, s, in, "needs an input [N, C] or [N, C, H, W]");
       require(in[1] > 0 && in.row_numel() > 0, s, in, "has an empty dimension");
       return std::make_unique<BatchNorm>(in[1]);
     },
     [](Spec, In in) { return int8::make_batch_norm(in); }, nullptr},
    {Op::kGlobalMaxPool, "global_max_pool",
     [](Spec s, In in) -> std::unique_ptr<Layer> {
       require_global_pool(s, in);
       return std::make_unique<GlobalMaxPool>();
     },
     [](Spec, In) { return int8::make_global_max_pool(); }, nullptr},
    {Op::kDropout, "dropout",
     [](Spec s, In) -> std::unique_ptr<Layer> { return std::make_unique<Dropout>(s.drop_below); },
     [](Spec s, In) { return int8::make_dropout(s.drop_below); }, nullptr},
    {Op::kReLU6, "relu6",
     [](Spec, In) -> std::unique_ptr<Layer> { return std::make_unique<ReLU>(6.0f); }, nullptr,
     nullptr},
    {Op::kGlobalAvgPool, "global_avg_pool",
     [](Spec s, In in) -> std::unique_ptr<Layer> {
       require_global_pool(s, in);
       return std::make_unique<GlobalAvgPool>();
     },
     nullptr, nullptr},
    {Op::kResidual, "residual",
     [](Spec s, In in) -> std::unique_ptr<Layer> { return std::make_unique<Residual>(s, in); },
     nullptr,
     " yet (an NPU-style int8 path for residual networks is future work); use --precision f32"},
};

constexpr bool rows_in_enum_order() {
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (static_cast<size_t>(kOps[i].op) != i || !kOps[i].f32) return false;
  return true;
}
static_assert(std::size(kOps) == static_cast<size_t>(Op::kCount), "one row per Op");
static_assert(rows_in_enum_order(), "rows in the order of the Op enum, each with an f32 layer");

}  // namespace

const OpRow& op_row(Op op) {
  ZT_ASSERT(static_cast<size_t>(op) < std::size(kOps), "not an Op");
  return kOps[static_cast<size_t>(op)];
}

const char* op_name(Op op) {
  return static_cast<size_t>(op) < std::size(kOps) ? kOps[static_cast<size_t>(op)].name : "unknown";
}

std::unique_ptr<Layer> make_layer(const LayerSpec& spec, const Shape& in) {
  require(in.rank >= 1, spec, in, "needs an input with a batch dimension");
  if (static_cast<size_t>(spec.op) >= std::size(kOps))
    ZT_THROW(InputError("unknown layer op " + std::to_string(static_cast<int>(spec.op))));
  return op_row(spec.op).f32(spec, in);
}

std::unique_ptr<QLayer> make_qlayer(const LayerSpec& spec, const Shape& in) {
  const OpRow& row = op_row(spec.op);
  if (!row.int8)
    ZT_THROW(InputError(std::string("layer ") + row.name + " has no integer (int8) path" +
                        (row.no_int8 ? row.no_int8 : "; use --precision f32")));
  return row.int8(spec, in);
}

}  // namespace zotrain
