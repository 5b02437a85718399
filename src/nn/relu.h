// ReLU, y = max(x, 0), or with a cap y = min(max(x, 0), cap): ReLU6, MobileNetV2's activation,
// is cap 6. Backward reads the output (0 < y < cap), so the layer may run in place.
#pragma once

#include "kernels/activation.h"
#include "zotrain/nn/layer.h"

namespace zotrain {

class ReLU : public Layer {
 public:
  explicit ReLU(float cap = kernels::kNoCap) : cap_(cap) {}
  std::string describe() const override;
  bool in_place() const override { return true; }
  Shape output_shape(const Shape& in) const override { return in; }
  bool backward_needs_output() const override { return true; }
  void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                const ExecContext& ctx) override;

 private:
  float cap_;
};

}  // namespace zotrain
