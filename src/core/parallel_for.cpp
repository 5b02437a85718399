// parallel_for on a pool or inline: shared by the threaded pool (thread_pool.cpp) and the pool
// of one of builds without threads (thread_pool_none.cpp).
#include "zotrain/core/thread_pool.h"

namespace zotrain {

void parallel_for(ThreadPool* pool, int64_t n, FunctionRef<void(int, int64_t, int64_t)> fn) {
  if (pool)
    pool->parallel_for(n, fn);
  else if (n > 0)
    fn(0, 0, n);
}

void parallel_for(ThreadPool* pool, int64_t n, FunctionRef<void(int64_t, int64_t)> fn) {
  parallel_for(pool, n, [&](int, int64_t begin, int64_t end) { fn(begin, end); });
}

}  // namespace zotrain
