// ReLU, y = max(x, 0). Backward reads the output (y > 0), so the layer may run in place.
#pragma once

#include "zotrain/nn/layer.h"

namespace zotrain {

class ReLU : public Layer {
 public:
  std::string describe() const override { return "relu"; }
  bool in_place() const override { return true; }
  Shape output_shape(const Shape& in) const override { return in; }
  bool backward_needs_output() const override { return true; }
  void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                const ExecContext& ctx) override;
};

}  // namespace zotrain
