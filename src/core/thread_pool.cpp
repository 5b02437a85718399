#include "zotrain/core/thread_pool.h"

#include <algorithm>

namespace zotrain {

namespace {
// About 50 microseconds of spinning: longer than the gap between two layers of a step,
// far shorter than the gap between steps that wait on data loading or I/O.
constexpr int kSpinIterations = 20000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < std::max(threads, 1); ++i)
    workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    int spins = 0;
    while (generation_.load(std::memory_order_acquire) == seen && spins < kSpinIterations) {
      cpu_relax();
      ++spins;
    }
    if (generation_.load(std::memory_order_acquire) == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load() != seen; });
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stop_) return;
    (*job_)(index);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::run(const std::function<void(int)>& fn) {
  if (workers_.empty()) {
    fn(0);
    return;
  }
  job_ = &fn;
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  wake_.notify_all();
  fn(0);
  while (pending_.load(std::memory_order_acquire) != 0) cpu_relax();
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int, int64_t, int64_t)>& fn) {
  int64_t parts = std::min<int64_t>(size(), n);
  if (parts <= 1) {
    if (n > 0) fn(0, 0, n);
    return;
  }
  run([&](int w) {
    if (w < parts) fn(w, n * w / parts, n * (w + 1) / parts);
  });
}

void parallel_for(ThreadPool* pool, int64_t n,
                  const std::function<void(int, int64_t, int64_t)>& fn) {
  if (pool)
    pool->parallel_for(n, fn);
  else if (n > 0)
    fn(0, 0, n);
}

void parallel_for(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  parallel_for(pool, n, [&](int, int64_t begin, int64_t end) { fn(begin, end); });
}

}  // namespace zotrain
