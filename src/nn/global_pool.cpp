#include "nn/global_pool.h"

namespace zotrain {

void GlobalPool::for_each_channel(const Shape& in, const ExecContext& ctx,
                                  FunctionRef<void(int64_t, int64_t)> fn) const {
  const int64_t positions = in.row_numel() / in[1];
  parallel_for(ctx.pool, in[0] * in[1], [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) fn(r, positions);
  });
}

}  // namespace zotrain
