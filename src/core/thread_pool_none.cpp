// The pool of builds without threads (ZOTRAIN_NO_THREADS, bare-metal devices): the caller is
// the only worker.
#include "zotrain/core/error.h"
#include "zotrain/core/thread_pool.h"

namespace zotrain {

ThreadPool::ThreadPool(int threads) {
  if (threads > 1)
    ZT_THROW(InputError("threads = " + std::to_string(threads) +
                        ": this build has no threads (ZOTRAIN_NO_THREADS); use threads = 1"));
}

ThreadPool::~ThreadPool() = default;

int ThreadPool::size() const {
  return 1;
}

void ThreadPool::run(FunctionRef<void(int)> fn) {
  fn(0);
}

void ThreadPool::parallel_for(int64_t n, FunctionRef<void(int, int64_t, int64_t)> fn) {
  if (n > 0) fn(0, 0, n);
}

}  // namespace zotrain
