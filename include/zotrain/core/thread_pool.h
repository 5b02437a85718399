// A pool of worker threads that stays hot through a training step: workers spin briefly on a
// generation counter before sleeping, so back-to-back parallel regions (one per layer) do not
// pay a wake-up each. The calling thread takes part as worker 0.
//
// Device builds without threads (ZOTRAIN_NO_THREADS, bare metal) have a pool of one: the caller.
#pragma once

#include <cstdint>

#include "zotrain/core/function_ref.h"

#if !defined(ZOTRAIN_NO_THREADS)
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace zotrain {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;

  // Runs fn(worker) once on every worker, worker = 0..size()-1, and waits for all.
  void run(FunctionRef<void(int worker)> fn);

  // Splits [0, n) into at most size() contiguous chunks and runs fn(slot, begin, end) on each;
  // slot < size() is distinct per chunk, so a chunk may own scratch slice `slot`. The chunks
  // depend only on n and size(); kernels must give results that do not depend on them.
  void parallel_for(int64_t n, FunctionRef<void(int slot, int64_t begin, int64_t end)> fn);

 private:
#if !defined(ZOTRAIN_NO_THREADS)
  void worker_loop(int index);

  std::vector<std::thread> workers_;
  const FunctionRef<void(int)>* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
#endif
};

// Runs fn over [0, n) on the pool, or inline (slot 0) when there is no pool.
void parallel_for(ThreadPool* pool, int64_t n,
                  FunctionRef<void(int slot, int64_t begin, int64_t end)> fn);
// The same for work that needs no scratch of its own.
void parallel_for(ThreadPool* pool, int64_t n, FunctionRef<void(int64_t begin, int64_t end)> fn);

}  // namespace zotrain
