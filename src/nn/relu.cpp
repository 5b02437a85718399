#include "nn/relu.h"

#include <sstream>

namespace zotrain {

std::string ReLU::describe() const {
  std::ostringstream s;
  s << "relu";
  if (cap_ != kernels::kNoCap) s << cap_;  // "relu6"
  return s.str();
}

void ReLU::forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const {
  const int64_t row = x.shape().row_numel();
  parallel_for(ctx.pool, x.shape()[0], [&](int64_t r0, int64_t r1) {
    kernels::relu_forward((r1 - r0) * row, x.data() + r0 * row, y.data() + r0 * row, cap_);
  });
}

void ReLU::backward(const Tensor&, const Tensor& y, const Tensor& dy, Tensor& dx,
                    const ExecContext& ctx) {
  if (dx.empty()) return;
  const int64_t row = y.shape().row_numel();
  parallel_for(ctx.pool, y.shape()[0], [&](int64_t r0, int64_t r1) {
    kernels::relu_backward((r1 - r0) * row, y.data() + r0 * row, dy.data() + r0 * row,
                           dx.data() + r0 * row, cap_);
  });
}

}  // namespace zotrain
