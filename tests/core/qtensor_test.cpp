#include "zotrain/core/qtensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "zotrain/core/rng.h"

namespace zotrain {
namespace {

// NITI's exponent, computed independently in double: range = ceil(log2 max|x|), exp = range - 7.
int expected_exp(const std::vector<float>& x) {
  double amax = 0;
  for (float v : x) amax = std::max(amax, std::fabs(static_cast<double>(v)));
  if (amax == 0) return 0;
  return static_cast<int>(std::ceil(std::log2(amax))) - 7;
}

struct Quantized {
  int exp;
  std::vector<int8_t> m;
};

Quantized quantize(const std::vector<float>& x) {
  Quantized q{0, std::vector<int8_t>(x.size(), 99)};
  q.exp = zotrain::quantize(x.data(), static_cast<int64_t>(x.size()), q.m.data());
  return q;
}

// Values uniform in scale · [-1, 1), with +scale or -scale at position 0 (sign alternating with
// the seed) so that the maximum is exactly known.
std::vector<float> random_values(int64_t n, float scale, uint64_t seed) {
  Rng rng(seed, 0);
  std::vector<float> x(n);
  for (auto& v : x) v = scale * rng.uniform(-1.0f, 1.0f);
  x[0] = seed % 2 ? -scale : scale;
  return x;
}

TEST(QTensorQuantize, ExponentFollowsCeilLog2OfTheMaximum) {
  struct Case {
    std::vector<float> x;
    int exp;
  };
  const std::vector<Case> cases = {
      {{127.0f}, 0},         // ceil(log2 127) = 7
      {{-127.0f, 3.0f}, 0},  // the maximum magnitude may be negative
      {{128.0f}, 0},         // power of two: ceil(log2 128) = 7 (clipped to 127)
      {{128.5f}, 1},        {{1.0f}, -7}, {{-1.0f}, -7},  {{0.75f, -0.1f}, -7}, {{1.01f}, -6},
      {{3.0f, -1.0f}, -5},  {{0.5f}, -8}, {{1e-6f}, -26},  // 2^-20 = 9.5e-7 < 1e-6 < 2^-19
      {{5000.0f}, 6},                                      // 2^12 < 5000 < 2^13
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << "x[0] " << c.x[0]);
    EXPECT_EQ(expected_exp(c.x), c.exp);  // the hand-written table agrees with the rule
    EXPECT_EQ(quantize(c.x).exp, c.exp);
  }
}

TEST(QTensorQuantize, MantissasAreRoundedAndClippedAtPowersOfTwo) {
  // Ties (x · 2^-exp exactly halfway) are left out: the rule does not say how they round.
  Quantized q = quantize({128.0f, -64.0f, 1.0f, -0.51f, 0.49f, -127.6f, 126.4f, 2.5001f});
  EXPECT_EQ(q.exp, 0);
  EXPECT_EQ(q.m, (std::vector<int8_t>{127, -64, 1, -1, 0, -127, 126, 3}));
  // The same values scaled by 2^-10 keep their mantissas under exponent -10.
  Quantized s = quantize({0.125f, -0.0625f});
  EXPECT_EQ(s.exp, -10);
  EXPECT_EQ(s.m, (std::vector<int8_t>{127, -64}));
}

// Exact powers of two quantize to a clipped 127 (the rule's range is one bit short for them).
TEST(QTensorQuantize, ExactPowersOfTwoClipTo127) {
  for (int e = -20; e <= 20; ++e) {
    const float p = std::ldexp(1.0f, e);
    Quantized q = quantize({p, -p, p / 2});
    EXPECT_EQ(q.exp, e - 7) << e;
    EXPECT_EQ(q.m, (std::vector<int8_t>{127, -127, 64})) << e;
  }
}

TEST(QTensorQuantize, AllZeroGivesExponentZeroAndZeros) {
  for (int64_t n : {1, 5, 64}) {
    std::vector<float> x(n, 0.0f);
    if (n > 1) x[1] = -0.0f;
    Quantized q = quantize(x);
    EXPECT_EQ(q.exp, 0);
    EXPECT_EQ(q.m, std::vector<int8_t>(n, 0));
    std::vector<float> back(n, 1.0f);
    dequantize(q.m.data(), n, q.exp, back.data());
    EXPECT_EQ(back, std::vector<float>(n, 0.0f));
  }
}

// Round trip: |dequantize(quantize(x)) - x| <= 2^(exp - 1), half a unit, except where the
// mantissa is clipped at ±127 (the maximum at or within half a unit of 2^range), where the error
// is at most one unit. m is exactly clip(round(x · 2^-exp)) up to ties.
TEST(QTensorQuantize, RoundTripErrorIsAtMostHalfAUnit) {
  uint64_t seed = 1;
  for (float scale : {1e-5f, 0.01f, 0.3f, 1.0f, 1.5f, 2.0f, 100.0f, 127.0f, 128.0f, 3000.0f})
    for (int64_t n : {1, 2, 33, 500}) {
      SCOPED_TRACE(::testing::Message() << "scale " << scale << " n " << n);
      std::vector<float> x = random_values(n, scale, seed++);
      Quantized q = quantize(x);
      ASSERT_EQ(q.exp, expected_exp(x));
      std::vector<float> back(n);
      dequantize(q.m.data(), n, q.exp, back.data());
      const double unit = std::ldexp(1.0, q.exp);
      int clipped = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double scaled = static_cast<double>(x[i]) / unit;  // exact
        ASSERT_LE(std::fabs(scaled), 128.0) << i;
        ASSERT_LE(std::abs(static_cast<int>(q.m[i])), 127) << i;
        ASSERT_EQ(static_cast<double>(back[i]), q.m[i] * unit) << i;  // dequantize is exact
        const double err = std::fabs(static_cast<double>(back[i]) - x[i]);
        if (std::fabs(scaled) > 127.5) {
          ASSERT_EQ(q.m[i], x[i] < 0 ? -127 : 127) << i;
          ASSERT_LE(err, unit) << i;
          ++clipped;
        } else {
          ASSERT_LE(err, unit / 2) << "element " << i << " x " << x[i] << " m " << int{q.m[i]};
          ASSERT_LE(std::fabs(q.m[i] - scaled), 0.5) << i;
        }
        if (x[i] != 0 && q.m[i] != 0) {
          ASSERT_EQ(q.m[i] < 0, x[i] < 0) << i;
        }
      }
      // Only a maximum of magnitude 2^range (an exact power of two) can be clipped here.
      const bool power_of_two = std::fabs(x[0]) == std::ldexp(1.0, q.exp + 7);
      EXPECT_EQ(clipped > 0, power_of_two);
      // The maximum uses the top bit: its mantissa magnitude is in (64, 127].
      EXPECT_GT(std::abs(static_cast<int>(q.m[0])), 64 - (power_of_two ? 0 : 1));
    }
}

// Values that are already m · 2^e with max |m| in [65, 127] come back unchanged.
TEST(QTensorQuantize, RepresentableValuesRoundTripExactly) {
  Rng rng(7, 1);
  for (int e : {-12, -7, -1, 0, 3}) {
    std::vector<int8_t> m(100);
    for (auto& v : m) v = static_cast<int8_t>(static_cast<int>(rng.below(255)) - 127);
    m[0] = -127, m[1] = 127, m[2] = 0;
    std::vector<float> x(100);
    dequantize(m.data(), 100, e, x.data());
    Quantized q = quantize(x);
    EXPECT_EQ(q.exp, e);
    EXPECT_EQ(q.m, m);
  }
}

}  // namespace
}  // namespace zotrain
