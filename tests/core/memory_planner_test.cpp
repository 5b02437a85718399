#include "core/memory_planner.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "zotrain/core/rng.h"
#include "zotrain/core/tensor.h"

namespace zotrain {
namespace {

TEST(MemoryPlanner, AChainOfLayersNeedsTwoBuffersAndDisjointLifetimesShare) {
  // Layer i reads buffer i - 1 and writes buffer i: ping-pong falls out of the lifetimes.
  MemoryPlanner chain;
  for (int i = 0; i < 6; ++i) chain.add(1000, i, i + 1);
  chain.plan();
  EXPECT_FALSE(chain.overlaps());
  EXPECT_EQ(chain.total(), 2 * align_up(1000));
  // A buffer kept to the end (a kept activation) takes a third.
  MemoryPlanner kept;
  for (int i = 0; i < 6; ++i) kept.add(1000, i, i == 2 ? 6 : i + 1);
  kept.plan();
  EXPECT_FALSE(kept.overlaps());
  EXPECT_EQ(kept.total(), 3 * align_up(1000));
  MemoryPlanner apart;
  const int a = apart.add(64, 0, 0), b = apart.add(640, 1, 1);
  apart.plan();
  EXPECT_EQ(apart.offset(a), 0u);
  EXPECT_EQ(apart.offset(b), 0u);
  EXPECT_EQ(apart.total(), 640u);
}

TEST(MemoryPlanner, RandomLifetimesNeverShareWhileAliveAndFitTheBounds) {
  Rng rng(7, 1);
  for (int trial = 0; trial < 50; ++trial) {
    MemoryPlanner p;
    const int n = 1 + static_cast<int>(rng.next_u32() % 40);
    std::vector<size_t> bytes;
    std::vector<std::pair<int, int>> life;
    for (int i = 0; i < n; ++i) {
      const int first = static_cast<int>(rng.next_u32() % 20);
      const int last = first + static_cast<int>(rng.next_u32() % 8);
      bytes.push_back(align_up(1 + rng.next_u32() % 5000));
      life.push_back({first, last});
      p.add(bytes.back(), first, last);
    }
    p.plan();
    ASSERT_FALSE(p.overlaps()) << "trial " << trial;
    // At least the most bytes alive at one step; at most every buffer side by side.
    size_t peak = 0, sum = 0;
    for (int step = 0; step < 28; ++step) {
      size_t alive = 0;
      for (int i = 0; i < n; ++i)
        if (life[i].first <= step && step <= life[i].second) alive += bytes[i];
      peak = std::max(peak, alive);
    }
    for (size_t b : bytes) sum += b;
    EXPECT_GE(p.total(), peak);
    EXPECT_LE(p.total(), sum);
    for (int i = 0; i < n; ++i) EXPECT_EQ(p.offset(i) % 64, 0u);
  }
}

}  // namespace
}  // namespace zotrain
