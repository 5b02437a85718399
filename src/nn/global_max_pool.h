// The maximum over all positions of each channel: [N, C, H, W] to [N, C]. PointNet's
// symmetric function, the max over the points of per-point features [N, C, 1, points]. Backward
// sends each output's gradient to the first position holding the maximum.
#pragma once

#include "nn/global_pool.h"

namespace zotrain {

class GlobalMaxPool : public GlobalPool {
 public:
  std::string describe() const override { return "global_max_pool"; }
  void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                const ExecContext& ctx) override;
};

}  // namespace zotrain
