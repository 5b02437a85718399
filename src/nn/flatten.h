// Flatten: [N, C, H, W] (any rank) to [N, C*H*W]. Forward and backward are copies, since the
// Network hands every layer its own output buffer.
#pragma once

#include "zotrain/nn/layer.h"

namespace zotrain {

class Flatten : public Layer {
 public:
  std::string describe() const override { return "flatten"; }
  bool in_place() const override { return true; }
  Shape output_shape(const Shape& in) const override { return Shape{in[0], in.row_numel()}; }
  void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                const ExecContext& ctx) override;
};

}  // namespace zotrain
