// Dropout: in a training pass each element is zeroed with probability `rate` and the others are
// scaled by 1 / (1 - rate); an evaluation pass is the identity. The mask is not stored: element
// i's fate is a Philox word of (ctx.key, i), so every pass of a training step (the perturbed
// passes of zeroth-order training and the head's backward) sees the same mask, which backward
// recomputes. PointNet drops 30 % of its 256 features before the classifier.
#pragma once

#include <cstdint>

#include "nn/dropout_mask.h"
#include "zotrain/nn/layer.h"

namespace zotrain {

// rate * 2^32, for rate in [0, 1).
uint32_t dropout_threshold(double rate);

class Dropout : public Layer {
 public:
  explicit Dropout(uint32_t drop_below);
  std::string describe() const override;
  Shape output_shape(const Shape& in) const override { return in; }
  bool in_place() const override { return true; }
  void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                const ExecContext& ctx) override;
  double rate() const { return drop_below_ * 0x1p-32; }

 private:
  // y = x * mask / (1 - rate) over the whole tensor (dy to dx in backward).
  void apply_mask(const Tensor& in, Tensor& out, const ExecContext& ctx) const;

  uint32_t drop_below_;
};

}  // namespace zotrain
