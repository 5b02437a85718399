#include "zo/ternary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "zotrain/core/rng.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain::zo {
namespace {

// The zero probabilities of the brief, as the float that PerturbationSpec stores.
const float kZeroProbabilities[] = {0.0f, 0.25f, 0.5f, 0.9f};

TEST(TernaryZeroThreshold, IsCeilOfPTimes2To24) {
  EXPECT_EQ(zero_threshold(0.0), 0u);
  EXPECT_EQ(zero_threshold(-0.5), 0u);
  EXPECT_EQ(zero_threshold(0.25), 1u << 22);
  EXPECT_EQ(zero_threshold(0.5), 1u << 23);
  EXPECT_EQ(zero_threshold(1.0), 1u << 24);
  EXPECT_EQ(zero_threshold(2.0), 1u << 24);
  EXPECT_EQ(zero_threshold(0x1p-24), 1u);
  EXPECT_EQ(zero_threshold(0x1p-30), 1u);                           // any p > 0 zeroes something
  EXPECT_EQ(zero_threshold(static_cast<double>(0.9f)), 15099494u);  // ceil(15099493.6)
  // A schedule's double 0.9 is the f32 path's float 0.9f (ceil(0.9 · 2^24) would be 15099495).
  EXPECT_EQ(zero_threshold(0.9), 15099494u);
}

// The integer perturbation is the float Rademacher perturbation with the same sparsity, element
// for element, for several seeds and tensors.
TEST(Ternary, EqualsFloatRademacherPerturbation) {
  for (float p : kZeroProbabilities) {
    const PerturbationSpec spec{Distribution::kRademacher, p};
    const uint32_t threshold = zero_threshold(static_cast<double>(p));
    for (uint64_t seed : {uint64_t{0}, uint64_t{42}, uint64_t{0x9E3779B97F4A7C15}})
      for (uint32_t tensor : {0u, 1u, 7u}) {
        SCOPED_TRACE(::testing::Message() << "p " << p << " seed " << seed << " tensor " << tensor);
        int64_t zeros = 0;
        for (uint64_t i = 0; i < 5000; ++i) {
          const int z = ternary(seed, tensor, threshold, i);
          ASSERT_EQ(static_cast<float>(z), perturbation(spec, seed, tensor, i)) << "i " << i;
          zeros += z == 0;
        }
        // Large indices (both halves of the counter) too.
        for (uint64_t i : {uint64_t{1} << 32, (uint64_t{1} << 32) + 1, ~uint64_t{0} - 1})
          ASSERT_EQ(static_cast<float>(ternary(seed, tensor, threshold, i)),
                    perturbation(spec, seed, tensor, i))
              << "i " << i;
        if (p == 0.0f) {
          EXPECT_EQ(zeros, 0);
        }
      }
  }
}

// Over n = 400000 elements the zero fraction has standard deviation sqrt(p(1-p)/n) <= 0.0008;
// the bound 0.004 is five of them. The nonzero values are balanced: the fraction of +1 among
// them has standard deviation <= 0.5/sqrt(0.1 n) = 0.0025, bound 0.0125.
TEST(Ternary, ZeroFractionIsP) {
  const int64_t n = 400000;
  for (float p : kZeroProbabilities) {
    SCOPED_TRACE(p);
    const uint32_t threshold = zero_threshold(static_cast<double>(p));
    int64_t zeros = 0, plus = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int z = ternary(2024, 3, threshold, static_cast<uint64_t>(i));
      ASSERT_TRUE(z == -1 || z == 0 || z == 1) << z;
      zeros += z == 0;
      plus += z == 1;
    }
    EXPECT_NEAR(static_cast<double>(zeros) / n, p, 0.004);
    EXPECT_NEAR(static_cast<double>(plus) / static_cast<double>(n - zeros), 0.5, 0.0125);
  }
  // p = 1: the threshold 2^24 zeroes every element.
  for (uint64_t i = 0; i < 1000; ++i) EXPECT_EQ(ternary(5, 0, zero_threshold(1.0), i), 0);
}

std::vector<int8_t> random_s8(int64_t n, uint64_t seed) {
  Rng rng(seed, 0);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(static_cast<int>(rng.below(255)) - 127);
  return v;
}

// dst = clip(src + eps · z) to ±127, elementwise, with ±127 and 0 in src.
TEST(TernaryAdd, AddsEpsTimesZAndClips) {
  const int64_t n = 2001;
  std::vector<int8_t> src = random_s8(n, 11);
  for (int64_t i = 0; i < 600; ++i) src[i] = i % 3 == 0 ? 127 : (i % 3 == 1 ? -127 : 0);
  for (float p : kZeroProbabilities)
    for (int eps : {1, 3, 7, 15, 31, 63, 127, 200}) {
      SCOPED_TRACE(::testing::Message() << "p " << p << " eps " << eps);
      const uint32_t threshold = zero_threshold(static_cast<double>(p));
      std::vector<int8_t> dst(n, 55);
      add_ternary(77, 2, threshold, eps, src.data(), dst.data(), 0, n);
      int clipped = 0;
      for (int64_t i = 0; i < n; ++i) {
        const int z = ternary(77, 2, threshold, static_cast<uint64_t>(i));
        const int want = std::clamp(src[i] + eps * z, -127, 127);
        ASSERT_EQ(dst[i], want) << "i " << i << " src " << int{src[i]} << " z " << z;
        clipped += want != src[i] + eps * z;
      }
      EXPECT_GT(clipped, 0);  // the ±127 entries get pushed past the limit at least once
      // Subtracting: eps of the other sign.
      std::vector<int8_t> minus(n);
      add_ternary(77, 2, threshold, -eps, src.data(), minus.data(), 0, n);
      for (int64_t i = 0; i < n; ++i) {
        const int z = ternary(77, 2, threshold, static_cast<uint64_t>(i));
        ASSERT_EQ(minus[i], std::clamp(src[i] - eps * z, -127, 127)) << i;
      }
    }
}

// Ranges of any parity and size, in any order and in place, give the whole-range result; the
// elements outside [begin, end) are not written.
TEST(TernaryAdd, AnySplitIntoRangesGivesTheSameResult) {
  const int64_t n = 1001;
  const std::vector<int8_t> src = random_s8(n, 12);
  const uint32_t threshold = zero_threshold(0.5);
  std::vector<int8_t> whole(n);
  add_ternary(9, 4, threshold, 5, src.data(), whole.data(), 0, n);
  Rng rng(13, 0);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<int64_t> cuts = {0, n};
    const int pieces = 1 + static_cast<int>(rng.below(8));
    for (int c = 0; c < pieces; ++c) cuts.push_back(rng.below(static_cast<uint32_t>(n + 1)));
    std::sort(cuts.begin(), cuts.end());
    std::vector<size_t> order(cuts.size() - 1);
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (size_t i = order.size(); i > 1; --i)  // shuffle the order of the ranges
      std::swap(order[i - 1], order[rng.below(static_cast<uint32_t>(i))]);
    std::vector<int8_t> inplace = src;
    for (size_t r : order) {
      std::vector<int8_t> before = inplace;
      add_ternary(9, 4, threshold, 5, inplace.data(), inplace.data(), cuts[r], cuts[r + 1]);
      for (int64_t i = 0; i < n; ++i) {
        if (i < cuts[r] || i >= cuts[r + 1]) {
          ASSERT_EQ(inplace[i], before[i]) << "outside " << i;
        }
      }
    }
    ASSERT_EQ(inplace, whole) << "trial " << trial;
  }
  // An empty range writes nothing.
  std::vector<int8_t> untouched(n, 3);
  add_ternary(9, 4, threshold, 5, src.data(), untouched.data(), 500, 500);
  EXPECT_EQ(untouched, std::vector<int8_t>(n, 3));
}

TEST(TernaryAccumulate, AddsSignTimesZ) {
  const int64_t n = 1501;
  for (float p : kZeroProbabilities) {
    SCOPED_TRACE(p);
    const uint32_t threshold = zero_threshold(static_cast<double>(p));
    std::vector<int32_t> acc(n);
    Rng rng(14, 0);
    for (auto& v : acc) v = static_cast<int32_t>(rng.below(2001)) - 1000;
    const std::vector<int32_t> start = acc;
    accumulate_ternary(31, 6, threshold, 1, acc.data(), 0, n);
    accumulate_ternary(32, 6, threshold, -1, acc.data(), 0, n);
    // In two ranges (the update's chunks), one not on a sign block's boundary.
    accumulate_ternary(33, 6, threshold, 3, acc.data(), 0, 700);
    accumulate_ternary(33, 6, threshold, 3, acc.data() + 700, 700, n);
    int64_t changed = 0;
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t u = static_cast<uint64_t>(i);
      const int32_t want = start[i] + ternary(31, 6, threshold, u) - ternary(32, 6, threshold, u) +
                           3 * ternary(33, 6, threshold, u);
      ASSERT_EQ(acc[i], want) << i;
      changed += acc[i] != start[i];
    }
    if (p < 0.5f) {
      EXPECT_GT(changed, n / 4);
    }
  }
  // The same seed with opposite signs cancels exactly.
  std::vector<int32_t> acc(n, 0);
  accumulate_ternary(40, 1, 0, 1, acc.data(), 0, n);
  accumulate_ternary(40, 1, 0, -1, acc.data(), 0, n);
  EXPECT_EQ(acc, std::vector<int32_t>(n, 0));
}

}  // namespace
}  // namespace zotrain::zo
