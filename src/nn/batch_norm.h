// Batch normalization over a per-channel feature: for an input [N, C] or [N, C, H, W] (PointNet's
// per-point features are [N, C, 1, points]) each channel is normalized by the mean and variance of
// its N*H*W values in the batch, then scaled by `weight` (gamma, initially 1) and shifted by
// `bias` (beta, initially 0).
//
// Training passes use the batch's statistics; a pass with ctx.update_stats also moves the running
// mean and (unbiased) variance towards them by kMomentum, as PyTorch does. Evaluation passes
// normalize by the running statistics, so a prediction does not depend on its batch.
#pragma once

#include "zotrain/nn/layer.h"

namespace zotrain {

class BatchNorm : public Layer {
 public:
  static constexpr float kEps = 1e-5f;      // added to the variance, as in PyTorch and PointNet
  static constexpr double kMomentum = 0.1;  // PyTorch's default

  explicit BatchNorm(int64_t channels) : channels_(channels) {}
  std::string describe() const override;
  Shape output_shape(const Shape& in) const override { return in; }
  std::vector<ParamSpec> param_specs() const override;
  // "running_mean" (0) and "running_var" (1).
  std::vector<ParamSpec> state_specs() const override;
  int64_t forward_macs(const Shape& in) const override { return 2 * in.numel(); }
  // Each channel's mean, 1 / sqrt(variance + eps) and unbiased variance: backward reads them
  // instead of a pass over x.
  size_t kept_stats_doubles(const Shape&) const override { return 3 * channels_; }
  void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const override;
  // Each channel's statistics are taken before its values are written, so y may be x.
  bool fuses_relu() const override { return true; }
  void forward_relu(const Tensor& x, Tensor& y, float cap, const ExecContext& ctx) const override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                const ExecContext& ctx) override;
  void backward_relu(const Tensor& x, const Tensor& dy, Tensor& dx, float cap,
                     const ExecContext& ctx) override;

 private:
  // backward, with dy gated by the ReLU of that cap after the layer (0: none).
  void backward_gated(const Tensor& x, const Tensor& dy, Tensor& dx, float cap,
                      const ExecContext& ctx);

  int64_t channels_;
};

}  // namespace zotrain
