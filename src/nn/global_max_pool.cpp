#include "zotrain/nn/global_max_pool.h"

#include <algorithm>

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
    for (int64_t r = r0; r < r1; ++r)
      y[r] = *std::max_element(x.data() + r * p, x.data() + (r + 1) * p);
  });
}

void GlobalMaxPool::backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor& dx,
                             const ExecContext& ctx) {
  if (dx.empty()) return;
  const int64_t p = positions(x.shape());
  parallel_for(ctx.pool, dy.numel(), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* row = x.data() + r * p;
      std::fill(dx.data() + r * p, dx.data() + (r + 1) * p, 0.0f);
      dx[r * p + (std::max_element(row, row + p) - row)] = dy[r];
    }
  });
}

}  // namespace zotrain
