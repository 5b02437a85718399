#include "zotrain/nn/global_max_pool.h"

#include "zotrain/kernels/global_max_pool.h"

namespace zotrain {
namespace {

// The number of positions per channel.
int64_t positions(const Shape& in) {
  return in.row_numel() / in[1];
}

}  // namespace

void GlobalMaxPool::forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const {
  const int64_t p = positions(x.shape());
  parallel_for(ctx.pool, y.numel(), [&](int64_t r0, int64_t r1) {
    kernels::global_max_pool_forward(x.data() + r0 * p, r1 - r0, p, y.data() + r0);
  });
}

void GlobalMaxPool::backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor& dx,
                             const ExecContext& ctx) {
  if (dx.empty()) return;
  const int64_t p = positions(x.shape());
  parallel_for(ctx.pool, dy.numel(), [&](int64_t r0, int64_t r1) {
    kernels::global_max_pool_backward(x.data() + r0 * p, dy.data() + r0, r1 - r0, p,
                                      dx.data() + r0 * p);
  });
}

}  // namespace zotrain
