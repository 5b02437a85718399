#include "zotrain/core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace zotrain {
namespace {

TEST(ThreadPool, ParallelForCoversEveryIndexOnce) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 2, 7, 1000}) {
      std::vector<std::atomic<int>> hits(n);
      for (int rep = 0; rep < 50; ++rep)
        pool.parallel_for(n, [&](int slot, int64_t b, int64_t e) {
          EXPECT_LT(slot, threads);
          for (int64_t i = b; i < e; ++i) hits[i]++;
        });
      for (auto& h : hits) EXPECT_EQ(h.load(), 50);
    }
  }
}

TEST(ThreadPool, RunGivesEveryWorkerItsIndex) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> seen(3);
  pool.run([&](int w) { seen[w]++; });
  for (auto& s : seen) EXPECT_EQ(s.load(), 1);
}

}  // namespace
}  // namespace zotrain
