#include "zotrain/core/thread_pool.h"

#include <algorithm>
#include <chrono>

namespace zotrain {

namespace {
// 50 microseconds of spinning: longer than the gap between two layers of a step, far shorter
// than the gap between steps that wait on data loading or I/O. Timed, not counted: a pause
// instruction takes 10 to 140 cycles depending on the CPU.
constexpr std::chrono::microseconds kSpin{50};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() or kSpin has passed; returns done().
template <typename Done>
bool spin_until(Done done) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 1;; ++i) {
    if (done()) return true;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() - start > kSpin) return done();
  }
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < std::max(threads, 1); ++i)
    workers_.emplace_back([this, i] { worker_loop(i); });
}

int ThreadPool::size() const {
  return static_cast<int>(workers_.size()) + 1;
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
    if (!spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; })) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load() != seen; });
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stop_) return;
    (*job_)(index);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::run(FunctionRef<void(int)> fn) {
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
  // After the spin, yield: with more runnable threads than cores (another process), a worker
  // that was preempted may be waiting for this very core.
  const auto finished = [&] { return pending_.load(std::memory_order_acquire) == 0; };
  if (!spin_until(finished))
    while (!finished()) std::this_thread::yield();
}

void ThreadPool::parallel_for(int64_t n, FunctionRef<void(int, int64_t, int64_t)> fn) {
  int64_t parts = std::min<int64_t>(size(), n);
  if (parts <= 1) {
    if (n > 0) fn(0, 0, n);
    return;
  }
  run([&](int w) {
    if (w < parts) fn(w, n * w / parts, n * (w + 1) / parts);
  });
}

}  // namespace zotrain
