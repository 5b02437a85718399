// Batch normalization over a per-channel feature: for an input [N, C] or [N, C, H, W] (PointNet's
// per-point features are [N, C, 1, points]) each channel is normalized by the mean and variance of
// its N*H*W values in the batch, then scaled by `weight` (gamma, initially 1) and shifted by
// `bias` (beta, initially 0).
//
// It always uses the batch's own statistics, in training and in evaluation alike: the Layer
// interface has no train / eval mode to switch to running averages yet (docs/data.md, "Feeding
// PointNet"). Evaluate with large batches.
#pragma once

#include "zotrain/nn/layer.h"

namespace zotrain {

class BatchNorm : public Layer {
 public:
  static constexpr float kEps = 1e-5f;  // added to the variance, as in PyTorch and PointNet

  explicit BatchNorm(int64_t channels) : channels_(channels) {}
  std::string describe() const override;
  Shape output_shape(const Shape& in) const override { return in; }
  std::vector<ParamSpec> param_specs() const override;
  int64_t forward_macs(const Shape& in) const override { return 2 * in.numel(); }
  void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                const ExecContext& ctx) override;

 private:
  int64_t channels_;
};

}  // namespace zotrain
