#include "nn/global_avg_pool.h"

#include <algorithm>
#include <numeric>

namespace zotrain {

void GlobalAvgPool::forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const {
  for_each_channel(x.shape(), ctx, [&](int64_t r, int64_t p) {
    y[r] = std::accumulate(x.data() + r * p, x.data() + (r + 1) * p, 0.0f) / static_cast<float>(p);
  });
}

void GlobalAvgPool::backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor& dx,
                             const ExecContext& ctx) {
  if (dx.empty()) return;
  for_each_channel(x.shape(), ctx, [&](int64_t r, int64_t p) {
    std::fill(dx.data() + r * p, dx.data() + (r + 1) * p, dy[r] / static_cast<float>(p));
  });
}

}  // namespace zotrain
