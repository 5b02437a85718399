// Average pooling.
#pragma once

#include "nn/pool2d.h"

namespace zotrain {

class AvgPool2d : public Pool2d {
 public:
  using Pool2d::Pool2d;

  std::string describe() const override { return describe_as("avg_pool2d"); }
  void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                const ExecContext& ctx) override;
};

}  // namespace zotrain
