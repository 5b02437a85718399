// The mean over all positions of each channel: [N, C, H, W] to [N, C]. MobileNetV2's and
// ResNet18's pooling before the classifier. Backward spreads each output's gradient evenly over
// the positions.
#pragma once

#include "nn/global_pool.h"

namespace zotrain {

class GlobalAvgPool : public GlobalPool {
 public:
  std::string describe() const override { return "global_avg_pool"; }
  void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                const ExecContext& ctx) override;
};

}  // namespace zotrain
