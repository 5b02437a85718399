#include "zotrain/nn/global_max_pool.h"

#include <algorithm>

namespace zotrain {

void GlobalMaxPool::forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const {
  for_each_channel(x.shape(), ctx, [&](int64_t r, int64_t p) {
    y[r] = *std::max_element(x.data() + r * p, x.data() + (r + 1) * p);
  });
}

void GlobalMaxPool::backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor& dx,
                             const ExecContext& ctx) {
  if (dx.empty()) return;
  for_each_channel(x.shape(), ctx, [&](int64_t r, int64_t p) {
    const float* row = x.data() + r * p;
    std::fill(dx.data() + r * p, dx.data() + (r + 1) * p, 0.0f);
    dx[r * p + (std::max_element(row, row + p) - row)] = dy[r];
  });
}

}  // namespace zotrain
