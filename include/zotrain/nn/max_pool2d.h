// Max pooling. Backward finds each window's maximum again from x (first maximum in scan order
// on ties, as forward), so nothing but the input is kept.
#pragma once

#include "zotrain/nn/pool2d.h"

namespace zotrain {

class MaxPool2d : public Pool2d {
 public:
  using Pool2d::Pool2d;

  std::string describe() const override { return describe_as("max_pool2d"); }
  bool max_pooling() const override { return true; }
  void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                const ExecContext& ctx) override;
};

}  // namespace zotrain
