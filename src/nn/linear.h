// Fully connected layer: y = x W^T + b, W of shape [out, in]. Inputs of rank > 2 are read as
// [batch, in] with in = product of the other dimensions.
#pragma once

#include "zotrain/nn/layer.h"

namespace zotrain {

class Linear : public Layer {
 public:
  Linear(int64_t in_features, int64_t out_features) : in_(in_features), out_(out_features) {}

  std::string describe() const override;
  Shape output_shape(const Shape& in) const override { return Shape{in[0], out_}; }
  std::vector<ParamSpec> param_specs() const override;
  int64_t forward_macs(const Shape& in) const override { return in[0] * in_ * out_; }
  void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const override;
  int64_t output_rows() const override { return out_; }
  void forward_rows(const Tensor& x, Tensor& y, int64_t o0, int64_t o1,
                    const ExecContext& ctx) const override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                const ExecContext& ctx) override;

 private:
  int64_t in_, out_;
};

}  // namespace zotrain
