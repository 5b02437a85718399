// Max pooling. Backward finds each window's maximum again from x (first maximum in scan order
// on ties, as forward), so nothing but the input is kept.
#pragma once

#include "nn/pool2d.h"

namespace zotrain {

class MaxPool2d : public Pool2d {
 public:
  using Pool2d::Pool2d;

  std::string describe() const override { return describe_as("max_pool2d"); }
  void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                const ExecContext& ctx) override;
  // backward, then that of the ReLU with `cap` (nn/graph.h, activation_cap) whose output x
  // is: dx is the gradient of the ReLU's input. One pass instead of two over the unpooled
  // activations.
  void backward_through_relu(const Tensor& x, const Tensor& dy, Tensor& dx, float cap,
                             const ExecContext& ctx) const;
};

}  // namespace zotrain
