#include "zotrain/core/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace zotrain {
namespace {

// Known-answer vectors of Random123's philox4x32_10 (kat_vectors).
TEST(Philox, KnownAnswers) {
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, 0),
            (Philox4x32{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, ~0ull),
            (Philox4x32{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, 0x299f31d0a4093822ull),
            (Philox4x32{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(Rng, SameSeedAndStreamGiveSameSequence) {
  Rng a(7, 3), b(7, 3), c(7, 4);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    uint32_t x = a.next_u32();
    EXPECT_EQ(x, b.next_u32());
    differs |= x != c.next_u32();
  }
  EXPECT_TRUE(differs);
}

TEST(Rng, NormalHasUnitMomentsAndBelowIsUniform) {
  Rng r(1, 0);
  const int n = 200000;
  double s = 0, s2 = 0;
  for (int i = 0; i < n; ++i) {
    double x = r.normal();
    s += x;
    s2 += x * x;
  }
  EXPECT_NEAR(s / n, 0.0, 0.01);
  EXPECT_NEAR(s2 / n, 1.0, 0.02);
  std::vector<int> counts(10, 0);
  for (int i = 0; i < n; ++i) counts[r.below(10)]++;
  for (int c : counts) EXPECT_NEAR(c, n / 10, 5 * std::sqrt(n / 10.0));
}

}  // namespace
}  // namespace zotrain
