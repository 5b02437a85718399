#include "nn/global_max_pool.h"

#include "kernels/global_max_pool.h"

namespace zotrain {

void GlobalMaxPool::forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const {
  for_each_channel(x.shape(), ctx, [&](int64_t r, int64_t p) {
    kernels::global_max_pool_forward(x.data() + r * p, 1, p, y.data() + r);
  });
}

void GlobalMaxPool::backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor& dx,
                             const ExecContext& ctx) {
  if (dx.empty()) return;
  for_each_channel(x.shape(), ctx, [&](int64_t r, int64_t p) {
    kernels::global_max_pool_backward(x.data() + r * p, dy.data() + r, 1, p, dx.data() + r * p);
  });
}

}  // namespace zotrain
