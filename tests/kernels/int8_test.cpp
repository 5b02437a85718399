#include "kernels/int8.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "kernels/activation.h"
#include "kernels/kernel_isas.h"
#include "kernels/reference.h"
#include "zotrain/core/rng.h"
#include "zotrain/kernels/pool.h"

namespace zotrain {
namespace {

using kernels::Rounding;

// n int8 values uniform in [lo, hi], with lo and hi themselves at the first two positions (the
// ±127 boundaries for the default range) so that every draw contains both extremes.
std::vector<int8_t> random_s8(int64_t n, uint64_t seed, uint64_t stream, int lo = -127,
                              int hi = 127) {
  Rng rng(seed, stream);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(lo + static_cast<int>(rng.below(hi - lo + 1)));
  if (n > 0) v[0] = static_cast<int8_t>(lo);
  if (n > 1) v[1] = static_cast<int8_t>(hi);
  return v;
}

// A uniform integer in [-2^bits + 1, 2^bits - 1] (bits <= 62).
int64_t random_int(Rng& rng, int bits) {
  const uint64_t u = (static_cast<uint64_t>(rng.next_u32()) << 32) | rng.next_u32();
  const int64_t mag = static_cast<int64_t>(u >> (64 - bits));
  return (rng.next_u32() & 1) ? -mag : mag;
}

template <typename T>
ref::Vec to_double(const std::vector<T>& v) {
  return ref::Vec(v.begin(), v.end());
}

// ---- range_bits ----

TEST(Int8RangeBits, IsTheBitWidthOfTheLargestMagnitude) {
  struct Case {
    std::vector<int64_t> x;
    int bits;
  };
  const std::vector<Case> cases = {
      {{0}, 0},
      {{0, 0, 0}, 0},
      {{1}, 1},
      {{-1}, 1},
      {{0, -1, 0}, 1},
      {{2, -3}, 2},
      {{127}, 7},
      {{-127, 5}, 7},
      {{64}, 7},
      {{63, -63}, 6},
      {{128}, 8},
      {{-128}, 8},
      {{3, -128, 127}, 8},
      {{255}, 8},
      {{256}, 9},
      {{std::numeric_limits<int32_t>::max()}, 31},
      {{-std::numeric_limits<int32_t>::max()}, 31},
      {{std::numeric_limits<int32_t>::min()}, 32},
      {{7, std::numeric_limits<int32_t>::min() + 1, 12}, 31},
      {{1 << 30}, 31},
      {{-(1 << 30) + 1}, 30},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << "first " << c.x[0] << " size " << c.x.size());
    std::vector<int32_t> x32(c.x.begin(), c.x.end());
    EXPECT_EQ(kernels::range_bits(x32.data(), static_cast<int64_t>(x32.size())), c.bits);
    EXPECT_EQ(kernels::range_bits(c.x.data(), static_cast<int64_t>(c.x.size())), c.bits);
  }
  // n = 0 is an empty (all-zero) tensor.
  EXPECT_EQ(kernels::range_bits(static_cast<const int32_t*>(nullptr), 0), 0);
  // Long enough for whole vectors, with the extreme in a vector lane or in the tail.
  for (int64_t at : {3, 20, 36}) {
    std::vector<int32_t> v(37, 5);
    v[at] = std::numeric_limits<int32_t>::min();
    EXPECT_EQ(kernels::range_bits(v.data(), 37), 32) << at;
    v[at] = -(1 << 20) + 1;
    EXPECT_EQ(kernels::range_bits(v.data(), 37), 20) << at;
  }
  // Magnitudes beyond int32 in the int64 version.
  const std::vector<int64_t> big = {int64_t{1} << 40, -(int64_t{1} << 41) + 1, 5};
  EXPECT_EQ(kernels::range_bits(big.data(), 3), 41);
  const std::vector<int64_t> min64 = {std::numeric_limits<int64_t>::min(), 1};
  EXPECT_EQ(kernels::range_bits(min64.data(), 2), 64);
  const std::vector<int64_t> max64 = {0, std::numeric_limits<int64_t>::max()};
  EXPECT_EQ(kernels::range_bits(max64.data(), 2), 63);
}

// Random data against the definition: the smallest b with max|x| < 2^b.
TEST(Int8RangeBits, MatchesDefinitionOnRandomData) {
  Rng rng(101, 0);
  for (int trial = 0; trial < 300; ++trial) {
    const int bits = 1 + static_cast<int>(rng.below(31));
    const int64_t n = 1 + rng.below(40);
    std::vector<int64_t> x(n);
    for (auto& v : x) v = random_int(rng, bits);
    if (trial % 5 == 0) x[rng.below(static_cast<uint32_t>(n))] = 0;
    double amax = 0;
    for (int64_t v : x) amax = std::max(amax, std::fabs(static_cast<double>(v)));
    int want = 0;
    while (std::ldexp(1.0, want) <= amax) ++want;
    std::vector<int32_t> x32(x.begin(), x.end());
    EXPECT_EQ(kernels::range_bits(x32.data(), n), want);
    EXPECT_EQ(kernels::range_bits(x.data(), n), want);
  }
}

// ---- round_shift ----

// sign(x) · floor(|x| / 2^s + 1/2) in double, exact for |x| < 2^53: q = floor(|x| / 2^s) and the
// fraction |x| / 2^s - q are both exact (a power-of-two scaling and a subtraction of the integer
// part), and the fraction is compared with 1/2 instead of added to it.
int64_t round_shift_reference(int64_t x, int s) {
  const double a = std::fabs(static_cast<double>(x)) / std::ldexp(1.0, s);
  const double q = std::floor(a);
  const double r = q + (a - q >= 0.5 ? 1.0 : 0.0);
  return static_cast<int64_t>(x < 0 ? -r : r);
}

TEST(Int8RoundShift, MatchesDoubleReference) {
  Rng rng(102, 0);
  for (int s = 0; s <= 30; ++s)
    for (int trial = 0; trial < 2000; ++trial) {
      // Magnitudes from tiny to 2^52, so that each s sees values below, at and above 2^s.
      const int bits = 1 + static_cast<int>(rng.below(52));
      const int64_t x = random_int(rng, bits);
      ASSERT_EQ(kernels::round_shift(x, s), round_shift_reference(x, s)) << "x " << x << " s " << s;
    }
}

TEST(Int8RoundShift, HalvesRoundAwayFromZeroAndZeroStaysZero) {
  for (int s = 1; s <= 30; ++s) {
    const int64_t half = int64_t{1} << (s - 1), one = int64_t{1} << s;
    SCOPED_TRACE(s);
    EXPECT_EQ(kernels::round_shift(0, s), 0);
    EXPECT_EQ(kernels::round_shift(half, s), 1);
    EXPECT_EQ(kernels::round_shift(-half, s), -1);
    EXPECT_EQ(kernels::round_shift(half - 1, s), 0);
    EXPECT_EQ(kernels::round_shift(-(half - 1), s), 0);
    EXPECT_EQ(kernels::round_shift(3 * half, s), 2);
    EXPECT_EQ(kernels::round_shift(-3 * half, s), -2);
    EXPECT_EQ(kernels::round_shift(127 * one + half - 1, s), 127);
    EXPECT_EQ(kernels::round_shift(-127 * one - half, s), -128);
  }
  for (int64_t x : {-127, -1, 0, 1, 127, 1 << 20}) EXPECT_EQ(kernels::round_shift(x, 0), x);
}

// ---- psto_shift ----

// NITI's PstoShift written with division and remainder: the s discarded bits of |x| are
// rest = |x| mod 2^s; the high half is rest / 2^(s/2) (ceil(s/2) bits), the low half
// rest mod 2^(s/2), doubled when s is odd so that both halves have ceil(s/2) bits.
int64_t psto_shift_reference(int64_t x, int s) {
  const uint64_t mag = x < 0 ? 0 - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
  uint64_t div = 1;
  for (int i = 0; i < s; ++i) div *= 2;
  uint64_t low_div = 1;
  for (int i = 0; i < s / 2; ++i) low_div *= 2;
  const uint64_t quotient = mag / div, rest = mag % div;
  const uint64_t high = rest / low_div;
  const uint64_t low = (rest % low_div) * (s % 2 == 1 ? 2 : 1);
  const uint64_t r = quotient + (high > low ? 1 : 0);
  return x < 0 ? -static_cast<int64_t>(r) : static_cast<int64_t>(r);
}

TEST(Int8PstoShift, MatchesDivisionReference) {
  Rng rng(103, 0);
  for (int s = 0; s <= 40; ++s)
    for (int trial = 0; trial < 2000; ++trial) {
      const int bits = 1 + static_cast<int>(rng.below(61));
      const int64_t x = random_int(rng, bits);
      ASSERT_EQ(kernels::psto_shift(x, s), psto_shift_reference(x, s)) << "x " << x << " s " << s;
    }
  // Every remainder of small shifts, both signs.
  for (int s = 1; s <= 8; ++s)
    for (int64_t x = -(int64_t{5} << s); x <= (int64_t{5} << s); ++x)
      ASSERT_EQ(kernels::psto_shift(x, s), psto_shift_reference(x, s)) << "x " << x << " s " << s;
}

// The weights' move by int32 sums in one pass equals the scalar rule, for every shift (the
// 32-bit lanes up to 31, the scalar path past them) and the int32 extremes, on a length that is
// no multiple of a vector.
TEST(Int8PstoShift, SubtractShiftedEqualsTheScalarRule) {
  Rng rng(105, 0);
  for (int s = 0; s <= 34; ++s) {
    std::vector<int32_t> acc(301);
    for (int32_t& v : acc)
      v = static_cast<int32_t>(rng.below(0xFFFFFFFFu)) >> static_cast<int>(rng.below(31));
    acc[0] = INT32_MIN, acc[1] = INT32_MAX, acc[2] = 0, acc[3] = -1, acc[4] = 1;
    std::vector<int8_t> w(acc.size());
    for (int8_t& v : w) v = static_cast<int8_t>(static_cast<int>(rng.below(255)) - 127);
    std::vector<int8_t> want = w;
    for (size_t i = 0; i < acc.size(); ++i)
      want[i] = kernels::clip_s8(w[i] - kernels::psto_shift(acc[i], s));
    kernels::subtract_psto_shifted(acc.data(), static_cast<int64_t>(acc.size()), s, w.data());
    ASSERT_EQ(w, want) << "s " << s;
  }
}

// Whatever the bits, the result is floor or ceil of |x| / 2^s with the sign of x, exact when
// nothing is discarded.
TEST(Int8PstoShift, IsFloorOrCeilWithTheSignOfX) {
  Rng rng(104, 0);
  for (int s = 0; s <= 30; ++s)
    for (int trial = 0; trial < 1000; ++trial) {
      const int64_t x = random_int(rng, 1 + static_cast<int>(rng.below(50)));
      const int64_t got = kernels::psto_shift(x, s);
      const double a = std::fabs(static_cast<double>(x)) / std::ldexp(1.0, s);  // exact
      const double mag = std::fabs(static_cast<double>(got));
      ASSERT_TRUE(mag == std::floor(a) || mag == std::ceil(a)) << "x " << x << " s " << s;
      if (got != 0) {
        ASSERT_EQ(got < 0, x < 0) << "x " << x << " s " << s;
      }
      if (a == std::floor(a)) {
        ASSERT_EQ(mag, a) << "x " << x << " s " << s;
      }
    }
}

// Hand-checked values: s = 4 splits the 4 discarded bits 2 + 2; s = 3 splits them 2 + 1 with the
// low bit doubled.
TEST(Int8PstoShift, HandCheckedCases) {
  // s = 4: rest = 0b0110 -> high 01, low 10 -> down; 0b1001 -> high 10, low 01 -> up.
  EXPECT_EQ(kernels::psto_shift(16 * 3 + 0b0110, 4), 3);
  EXPECT_EQ(kernels::psto_shift(16 * 3 + 0b1001, 4), 4);
  EXPECT_EQ(kernels::psto_shift(-(16 * 3 + 0b1001), 4), -4);
  EXPECT_EQ(kernels::psto_shift(16 * 3 + 0b0101, 4), 3);  // high == low -> down
  // s = 3: rest = 0b101 -> high 10, low 1 doubled = 10 -> down; 0b110 -> high 11, low 0 -> up.
  EXPECT_EQ(kernels::psto_shift(8 * 5 + 0b101, 3), 5);
  EXPECT_EQ(kernels::psto_shift(8 * 5 + 0b110, 3), 6);
  EXPECT_EQ(kernels::psto_shift(-(8 * 5 + 0b110), 3), -6);
  // s = 1: the low half is empty, the high half the one discarded bit: halves round up.
  EXPECT_EQ(kernels::psto_shift(5, 1), 3);
  EXPECT_EQ(kernels::psto_shift(-5, 1), -3);
  EXPECT_EQ(kernels::psto_shift(0, 7), 0);
  EXPECT_EQ(kernels::psto_shift(-127, 0), -127);
}

// ---- requantize ----

// The values an accumulator of `bits` bits takes, with the extremes of that range.
std::vector<int64_t> random_acc(Rng& rng, int64_t n, int bits) {
  std::vector<int64_t> acc(n);
  for (auto& v : acc) v = random_int(rng, 1 + static_cast<int>(rng.below(bits)));
  const int64_t top = (int64_t{1} << bits) - 1;
  if (n > 2) {
    acc[0] = top;
    acc[1] = -top;
    acc[2] = 0;
  }
  return acc;
}

int64_t expected_shift(const std::vector<int64_t>& acc, int bits) {
  int range = 0;
  for (int64_t v : acc)
    while (std::ldexp(1.0, range) <= std::fabs(static_cast<double>(v))) ++range;
  return range > bits ? range - bits : 0;
}

// Both overloads against the definition, for accumulators that fit int32 with room to spare.
TEST(Int8Requantize, MatchesDefinitionForInt32AndInt64) {
  Rng rng(105, 0);
  for (Rounding r : {Rounding::kNearest, Rounding::kPseudoStochastic})
    for (int bits : {1, 3, 5, 7})
      for (int acc_bits : {1, 2, 6, 7, 8, 9, 13, 20, 27, 30})
        for (int64_t n : {1, 3, 17, 64, 301}) {
          SCOPED_TRACE(::testing::Message() << "rounding " << static_cast<int>(r) << " bits "
                                            << bits << " acc_bits " << acc_bits << " n " << n);
          std::vector<int64_t> acc = random_acc(rng, n, acc_bits);
          std::vector<int32_t> acc32(acc.begin(), acc.end());
          const int shift = static_cast<int>(expected_shift(acc, bits));
          std::vector<int8_t> out32(n, 99), out64(n, 99);
          EXPECT_EQ(kernels::requantize(acc32.data(), n, bits, r, out32.data()), shift);
          EXPECT_EQ(kernels::requantize(acc.data(), n, bits, r, out64.data()), shift);
          EXPECT_EQ(out32, out64);
          for (int64_t i = 0; i < n; ++i) {
            const int64_t shifted = r == Rounding::kNearest ? round_shift_reference(acc[i], shift)
                                                            : psto_shift_reference(acc[i], shift);
            const int64_t want = std::clamp<int64_t>(shifted, -127, 127);
            ASSERT_EQ(out64[i], want) << "acc " << acc[i] << " shift " << shift;
            ASSERT_LE(std::abs(static_cast<int>(out64[i])), 127);
            // The result has at most `bits` bits, plus one from rounding up to 2^bits.
            ASSERT_LE(std::abs(static_cast<int>(out64[i])), std::min(127, 1 << bits));
          }
        }
}

TEST(Int8Requantize, AllZeroAndSevenBitValuesAreUnchanged) {
  for (Rounding r : {Rounding::kNearest, Rounding::kPseudoStochastic}) {
    std::vector<int32_t> zeros32(37, 0);
    std::vector<int64_t> zeros64(37, 0);
    std::vector<int8_t> out(37, 5);
    EXPECT_EQ(kernels::requantize(zeros32.data(), 37, 7, r, out.data()), 0);
    EXPECT_EQ(out, std::vector<int8_t>(37, 0));
    out.assign(37, 5);
    EXPECT_EQ(kernels::requantize(zeros64.data(), 37, 7, r, out.data()), 0);
    EXPECT_EQ(out, std::vector<int8_t>(37, 0));

    std::vector<int8_t> m = random_s8(101, 106, 0);
    std::vector<int32_t> m32(m.begin(), m.end());
    std::vector<int64_t> m64(m.begin(), m.end());
    out.assign(101, 5);
    EXPECT_EQ(kernels::requantize(m32.data(), 101, 7, r, out.data()), 0);
    EXPECT_EQ(out, m);
    out.assign(101, 5);
    EXPECT_EQ(kernels::requantize(m64.data(), 101, 7, r, out.data()), 0);
    EXPECT_EQ(out, m);
  }
  // 128 needs 8 bits: shifted by one, to 64.
  const std::vector<int32_t> x = {128, -3, 1};
  std::vector<int8_t> out(3);
  EXPECT_EQ(kernels::requantize(x.data(), 3, 7, Rounding::kNearest, out.data()), 1);
  EXPECT_EQ(out, (std::vector<int8_t>{64, -2, 1}));
}

// The two roundings differ exactly where round-to-nearest and PstoShift differ.
TEST(Int8Requantize, NearestAndPseudoStochasticDiffer) {
  Rng rng(107, 0);
  std::vector<int64_t> acc = random_acc(rng, 500, 16);
  std::vector<int8_t> nearest(500), psto(500);
  const int s1 = kernels::requantize(acc.data(), 500, 7, Rounding::kNearest, nearest.data());
  const int s2 = kernels::requantize(acc.data(), 500, 7, Rounding::kPseudoStochastic, psto.data());
  ASSERT_EQ(s1, 9);
  ASSERT_EQ(s2, 9);
  int differ = 0;
  for (int i = 0; i < 500; ++i) {
    const int64_t n = std::clamp<int64_t>(kernels::round_shift(acc[i], 9), -127, 127);
    const int64_t p = std::clamp<int64_t>(kernels::psto_shift(acc[i], 9), -127, 127);
    EXPECT_EQ(nearest[i], n);
    EXPECT_EQ(psto[i], p);
    differ += n != p;
  }
  EXPECT_GT(differ, 50);  // roughly a third of uniform remainders round differently
}

// Accumulators near the int32 limits (reachable with k > 130000 products of ±127): the int32
// overload must agree with the int64 one.
TEST(Int8Requantize, Int32NearTheLimitsMatchesInt64) {
  const std::vector<int32_t> acc32 = {std::numeric_limits<int32_t>::max(),
                                      std::numeric_limits<int32_t>::max() - (1 << 22),
                                      std::numeric_limits<int32_t>::min() + 1,
                                      -(1 << 30),
                                      1 << 30,
                                      0,
                                      -5};
  const int64_t n = static_cast<int64_t>(acc32.size());
  const std::vector<int64_t> acc64(acc32.begin(), acc32.end());
  for (Rounding r : {Rounding::kNearest, Rounding::kPseudoStochastic})
    for (int bits : {1, 5, 7}) {
      SCOPED_TRACE(::testing::Message() << "rounding " << static_cast<int>(r) << " bits " << bits);
      std::vector<int8_t> out32(n), out64(n);
      const int s32 = kernels::requantize(acc32.data(), n, bits, r, out32.data());
      const int s64 = kernels::requantize(acc64.data(), n, bits, r, out64.data());
      EXPECT_EQ(s32, 31 - bits);
      EXPECT_EQ(s64, 31 - bits);
      EXPECT_EQ(out32, out64);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t shifted = r == Rounding::kNearest ? round_shift_reference(acc64[i], s64)
                                                        : psto_shift_reference(acc64[i], s64);
        const int64_t want = std::clamp<int64_t>(shifted, -127, 127);
        EXPECT_EQ(out32[i], want) << "int32 acc " << acc32[i];
        EXPECT_EQ(out64[i], want) << "int64 acc " << acc64[i];
      }
    }
}

// ---- gemm_s8 ----

struct GemmCase {
  bool ta, tb;
  int64_t m, n, k;
  int64_t pad_a, pad_b, pad_c;  // leading dimension beyond the row width
};

std::string describe(const GemmCase& g) {
  return (::testing::Message() << "ta " << g.ta << " tb " << g.tb << " m " << g.m << " n " << g.n
                               << " k " << g.k << " pads " << g.pad_a << "," << g.pad_b << ","
                               << g.pad_c)
      .GetString();
}

std::vector<GemmCase> gemm_cases() {
  std::vector<GemmCase> cases;
  const int64_t sizes[] = {1, 3, 5, 17, 33};
  int i = 0;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int64_t m : sizes)
        for (int64_t n : sizes)
          for (int64_t k : {1, 4, 5, 13, 31, 33, 63, 64, 120}) {
            ++i;
            cases.push_back({ta, tb, m, n, k, i % 3, (i / 3) % 4, (i / 2) % 3});
          }
  // LeNet-5's products: conv1/conv2 forward, the linear layers.
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      cases.push_back({ta, tb, 6, 784, 25, 0, 0, 0});
      cases.push_back({ta, tb, 16, 100, 150, 1, 2, 3});
      cases.push_back({ta, tb, 32, 120, 400, 0, 5, 0});
      // k over more than two of the NEON row tiles' 512-step blocks; 4 + 1 rows, 16 + 16 + 8 + 3
      // columns.
      cases.push_back({ta, tb, 5, 43, 1100, 1, 0, 2});
    }
  return cases;
}

using GemmS8Fn = decltype(&kernels::gemm_s8);

// C against the double product for every case, accumulate on and off, A's values in [lo, hi]
// and B's in [b_lo, b_hi]; the padding of C must be left untouched.
void expect_gemm_matches_double(GemmS8Fn gemm, int lo, int hi, int b_lo, int b_hi) {
  uint64_t stream = 0;
  for (const GemmCase& g : gemm_cases())
    for (bool accumulate : {false, true}) {
      SCOPED_TRACE(describe(g) + (accumulate ? " accumulate" : ""));
      const int64_t a_rows = g.ta ? g.k : g.m, a_cols = g.ta ? g.m : g.k;
      const int64_t b_rows = g.tb ? g.n : g.k, b_cols = g.tb ? g.k : g.n;
      const int64_t lda = a_cols + g.pad_a, ldb = b_cols + g.pad_b, ldc = g.n + g.pad_c;
      std::vector<int8_t> a = random_s8(a_rows * lda, 108, stream++, lo, hi);
      std::vector<int8_t> b = random_s8(b_rows * ldb, 108, stream++, b_lo, b_hi);
      Rng rng(109, stream++);
      std::vector<int32_t> c(g.m * ldc);
      for (auto& v : c) v = static_cast<int32_t>(rng.next_u32() % 2000001) - 1000000;
      ref::Vec want = ref::gemm(g.ta, g.tb, g.m, g.n, g.k, 1.0, to_double(a), lda, to_double(b),
                                ldb, accumulate ? 1.0 : 0.0, to_double(c), ldc);
      gemm(g.ta, g.tb, g.m, g.n, g.k, a.data(), lda, b.data(), ldb, c.data(), ldc, accumulate);
      for (int64_t i = 0; i < g.m * ldc; ++i)
        ASSERT_EQ(static_cast<double>(c[i]), want[i]) << "element " << i / ldc << "," << i % ldc;
    }
}

TEST(Int8Gemm, ReferenceMatchesDoublePrecision) {
  expect_gemm_matches_double(kernels::gemm_s8_ref, -127, 127, -127, 127);
}

// Every instruction set's kernels: register tiles of 3 x 4 dot products along k by 16 and 8,
// which the sizes fill in part or not at all.
TEST(Int8Gemm, FastKernelMatchesDoublePrecision) {
  test::for_each_kernel_isa(
      [] { expect_gemm_matches_double(kernels::gemm_s8, -127, 127, -127, 127); });
}

// The whole int8 range, -128 included: 16-bit products still fit.
TEST(Int8Gemm, FastKernelHandlesMinus128) {
  test::for_each_kernel_isa(
      [] { expect_gemm_matches_double(kernels::gemm_s8, -128, 127, -128, 127); });
}

// One operand in [0, 127] (ReLU outputs), which the AVX2 kernel multiplies as unsigned bytes
// (A, or B through C^T = B A^T), the other over the whole int8 range.
TEST(Int8Gemm, FastKernelWithANonnegativeOperand) {
  test::for_each_kernel_isa([] {
    expect_gemm_matches_double(kernels::gemm_s8, 0, 127, -128, 127);
    expect_gemm_matches_double(kernels::gemm_s8, -128, 127, 0, 127);
  });
}

// The largest products, 127 * -128 and 127 * 127 in every pair (as unsigned bytes, the limit of
// vpmaddubsw's 16-bit sums of pairs), and a single negative value as A's last element, which
// must keep the kernel off the unsigned path.
TEST(Int8Gemm, ExtremeProductsAreExact) {
  const int64_t m = 5, n = 7, k = 77;
  for (int8_t bv : {int8_t{-128}, int8_t{127}})
    for (bool last_negative : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "b " << int{bv} << " last negative " << last_negative);
      std::vector<int8_t> a(m * k, 127), b(n * k, bv);
      if (last_negative) a.back() = -1;
      std::vector<int32_t> want(m * n);
      kernels::gemm_s8_ref(false, true, m, n, k, a.data(), k, b.data(), k, want.data(), n, false);
      test::for_each_kernel_isa([&] {
        std::vector<int32_t> c(m * n);
        kernels::gemm_s8(false, true, m, n, k, a.data(), k, b.data(), k, c.data(), n, false);
        EXPECT_EQ(c, want);
      });
    }
}

// Sparse A (ReLU outputs, which the fast kernel skips) and an all-zero A.
TEST(Int8Gemm, SparseAndZeroOperands) {
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int zero_percent : {100, 90, 50}) {
        SCOPED_TRACE(::testing::Message()
                     << "ta " << ta << " tb " << tb << " zeros " << zero_percent << "%");
        const int64_t m = 9, n = 21, k = 37;
        std::vector<int8_t> a = random_s8(m * k, 110, 0), b = random_s8(k * n, 110, 1);
        Rng rng(110, 2);
        for (auto& v : a)
          if (static_cast<int>(rng.below(100)) < zero_percent) v = 0;
        std::vector<int32_t> c(m * n, 7), want(m * n, 7);
        kernels::gemm_s8(ta, tb, m, n, k, a.data(), ta ? m : k, b.data(), tb ? k : n, c.data(), n,
                         false);
        ref::Vec d = ref::gemm(ta, tb, m, n, k, 1.0, to_double(a), ta ? m : k, to_double(b),
                               tb ? k : n, 0.0, ref::Vec(m * n), n);
        for (int64_t i = 0; i < m * n; ++i) ASSERT_EQ(static_cast<double>(c[i]), d[i]) << i;
      }
}

// ---- convolution ----

std::vector<ref::ConvShape> conv_cases(int64_t images) {
  std::vector<ref::ConvShape> cases = {
      {images, 1, 28, 28, 6, 5, 1, 2},   // LeNet-5 conv1
      {images, 6, 14, 14, 16, 5, 1, 0},  // LeNet-5 conv2
      {images, 3, 7, 6, 4, 3, 1, 0},    {images, 3, 7, 6, 4, 3, 2, 1},
      {images, 2, 5, 5, 3, 5, 1, 2},    {images, 4, 4, 3, 2, 1, 1, 0},
      {images, 1, 2, 2, 2, 3, 1, 1},    {images, 2, 9, 8, 5, 3, 2, 2},
      {images, 2, 8, 7, 3, 2, 2, 0},
  };
  // The AVX2 kernel's register tiles: channel rows (6 channels x 16 positions) full and partial
  // in both directions; pixel rows (6 pixels x 16 channels) with odd channel counts and partial
  // panels; 1x1 convolutions, which the VNNI sets move to pixel rows in quads (MobileNetV2's).
  const ref::ConvShape tiles[] = {
      {images, 3, 9, 13, 13, 3, 1, 1},
      {images, 5, 6, 17, 11, 4, 1, 2},
      {images, 1, 3, 3, 7, 1, 1, 0},
      {images, 3, 6, 6, 16, 3, 1, 0},
      {images, 3, 11, 9, 21, 3, 2, 1},
      {images, 5, 7, 8, 40, 2, 1, 1},
      {images, 18, 5, 7, 24, 1, 1, 0},
      {images, 32, 3, 3, 16, 1, 1, 0},
      // Pixel rows copied 8 pixels and a word's channels at a time,
      // the last of each overlapping: 9 and 11 wide, 10 and 12 channels.
      {images, 12, 5, 9, 16, 1, 1, 0},
      {images, 10, 6, 11, 20, 3, 1, 1},
      // Unpadded planes copied as one row: 7x7 (rows narrower than 8), 2x2 (fewer than 8
      // pixels: one at a time), 1x1 at stride 2.
      {images, 20, 7, 7, 24, 1, 1, 0},
      {images, 20, 2, 2, 16, 1, 1, 0},
      {images, 12, 7, 7, 16, 1, 2, 0},
      // Channel rows in quads (VNNI sets): two tail columns of kernels 6 and 10 tall (columns of
      // 4 rows past the kernel's), and 7 wide (a window of 3 taps, no columns).
      {images, 2, 9, 11, 7, 6, 1, 2},
      {images, 1, 12, 12, 5, 10, 1, 2},
      {images, 3, 8, 10, 6, 7, 1, 3}};
  cases.insert(cases.end(), std::begin(tiles), std::end(tiles));
  Rng rng(111, 0);
  for (int i = 0; i < 16; ++i) {
    const int64_t k = 1 + rng.below(4), pad = rng.below(3);
    const int64_t h = k + rng.below(9), w = k + rng.below(12);
    cases.push_back({images, 1 + rng.below(4), h, w, 1 + rng.below(9), k, 1 + (i % 2), pad});
  }
  // 1x1 channel rows in pairs from the interleaved image (AVX2 and AVX-VNNI sets; the input
  // gradient's by convolution too): odd channel counts (9; 13 in the gradient of the first), planes
  // of 63 positions (a last tile partly past it) and of 16. Last, so that the cases before keep the
  // data seeds the tests give them in order.
  cases.push_back({images, 5, 7, 9, 13, 1, 1, 0});
  cases.push_back({images, 9, 4, 4, 7, 1, 1, 0});
  // Channel-rows tiles stored whole where they lie in one row below out_w: 15 columns of 17, so
  // the tile at the last row's first column ends one column past out_w, where the plane of the
  // next channel begins.
  cases.push_back({images, 2, 17, 15, 7, 3, 1, 1});
  // Channel rows in pairs whose pair images would pass their budget (2 of 56 KB, AVX2 and AVX-VNNI
  // sets): read from the padded image, two runs a step. The smaller shapes above read pair images,
  // three of them (a negative distance: the next kernel row's first channel) for 3x7x6 at k = 3.
  cases.push_back({images, 4, 40, 40, 6, 3, 1, 1});
  return cases;
}

// Scratch of the declared size followed by a guard band that catches a kernel using more.
struct Work {
  static constexpr unsigned char kGuard = 0xA5;
  explicit Work(int64_t bytes) : size(bytes), buffer((bytes + 256) / 8 + 1) {
    auto* p = reinterpret_cast<unsigned char*>(buffer.data());
    for (size_t i = size; i < buffer.size() * 8; ++i) p[i] = kGuard;
  }
  ~Work() {
    const auto* p = reinterpret_cast<const unsigned char*>(buffer.data());
    for (size_t i = size; i < buffer.size() * 8; ++i)
      EXPECT_EQ(p[i], kGuard) << "scratch overrun past " << size << " bytes";
  }
  void* data() { return buffer.data(); }
  size_t size;
  std::vector<uint64_t> buffer;  // 8-byte aligned
};

// Every instruction set's kernel (the AVX2 one reads the image in place), weights over the whole
// int8 range, -128 included, and inputs in [lo, hi]; edit(x) changes the input before the call.
template <typename Edit>
void expect_conv_forward_matches(int lo, int hi, Edit edit) {
  test::for_each_kernel_isa([&] {
    for (const auto& s : conv_cases(2)) {
      SCOPED_TRACE(describe(s));
      auto g = geometry(s);
      std::vector<int8_t> x = random_s8(s.x_numel(), 112, 0, lo, hi),
                          w = random_s8(s.w_numel(), 112, 1, -128);
      edit(x, w);
      std::vector<int32_t> y(s.y_numel(), 12345);  // overwritten
      Work work(kernels::conv2d_s8_work_bytes(g));
      kernels::conv2d_s8_forward(g, s.n, x.data(), w.data(), y.data(), work.data());
      const ref::Vec want = ref::conv2d(s, to_double(x), to_double(w), ref::Vec{});
      for (int64_t i = 0; i < s.y_numel(); ++i) ASSERT_EQ(static_cast<double>(y[i]), want[i]) << i;
    }
  });
}

void no_edit(std::vector<int8_t>&, std::vector<int8_t>&) {}

TEST(Int8Conv2d, ForwardMatchesDirectConvolution) {
  expect_conv_forward_matches(-128, 127, no_edit);
}

// Inputs in [0, 127], as ReLU and pooling outputs are, with and without one negative byte (the
// VNNI sets' quads read every input offset by 128, whatever its signs).
TEST(Int8Conv2d, ForwardMatchesOnNonnegativeInputs) {
  expect_conv_forward_matches(0, 127, no_edit);
  expect_conv_forward_matches(0, 127,
                              [](std::vector<int8_t>& x, std::vector<int8_t>&) { x.back() = -1; });
}

// The blocks of one pass share a weights key: a worker's scratch keeps the weights its first
// block packed. Blocks of one image each, as a pass over 4 images (the third with a negative
// byte); then new weights under a new key, which must be packed anew.
TEST(Int8Conv2d, BlocksOfOnePassPackTheWeightsOnce) {
  test::for_each_kernel_isa([] {
    for (const auto& s : conv_cases(4)) {
      SCOPED_TRACE(describe(s));
      auto g = geometry(s);
      std::vector<int8_t> x = random_s8(s.x_numel(), 114, 0, 0, 127);
      x[2 * g.in_numel() + g.in_numel() / 2] = -3;
      Work work(kernels::conv2d_s8_work_bytes(g));
      for (int round = 0; round < 2; ++round) {
        std::vector<int8_t> w = random_s8(s.w_numel(), 114, 1 + round, -128);
        const uint64_t key = kernels::new_weights_key();
        std::vector<int32_t> y(s.y_numel(), 12345);
        for (int64_t n = 0; n < s.n; ++n)
          kernels::conv2d_s8_forward(g, 1, x.data() + n * g.in_numel(), w.data(),
                                     y.data() + n * g.out_numel(), work.data(), key);
        const ref::Vec want = ref::conv2d(s, to_double(x), to_double(w), ref::Vec{});
        for (int64_t i = 0; i < s.y_numel(); ++i)
          ASSERT_EQ(static_cast<double>(y[i]), want[i]) << "round " << round << " at " << i;
      }
    }
  });
}

// The convolution with its 2x2 max pooling fused gives, image by image, the pooling of the
// convolution's output and the range of that output, bit for bit, in every set that fuses them.
// The VNNI sets fuse pixel rows in quads, and channel rows in quads whose tiles are two output
// rows (padded rows of 32): LeNet-5's conv2 and conv1 (the first two cases) must take them there.
// The AVX2 and AVX-VNNI sets fuse channel rows in pairs (tiles of 8 columns of two rows):
// LeNet-5's conv1 and the last two cases (1x1).
// Pixel rows: window counts that leave a last tile part-filled (25, 16, 4, 1), channels past a
// panel (20, 33, 7), stride 2 with padding. Channel rows: a last tile of fewer channels (9), 30
// columns of 32 (3x3) and 28 of 32 unpadded.
TEST(Int8Conv2d, MaxPooledForwardIsThePoolingOfTheForward) {
  int fused_cases = 0;
  test::for_each_kernel_isa([&] {
    std::vector<ref::ConvShape> cases = {{3, 6, 14, 14, 16, 5, 1, 0}, {3, 1, 28, 28, 6, 5, 1, 2},
                                         {2, 6, 14, 14, 20, 5, 1, 0}, {2, 3, 16, 16, 24, 3, 2, 1},
                                         {2, 5, 8, 8, 7, 5, 1, 2},    {2, 9, 6, 6, 33, 3, 1, 0},
                                         {1, 4, 5, 5, 16, 4, 1, 0},   {2, 2, 28, 28, 9, 5, 1, 2},
                                         {2, 1, 30, 30, 8, 3, 1, 1},  {2, 3, 32, 32, 6, 5, 1, 0}};
    for (const auto& s : conv_cases(2))
      if (s.out_h() % 2 == 0 && s.out_w() % 2 == 0) cases.push_back(s);
    // 1x1 channel rows (AVX2 and AVX-VNNI sets) read from the interleaved copy: odd channel counts,
    // planes of one and two tiles' width (last, so the cases before keep their seeds).
    cases.insert(cases.end(), {{2, 5, 16, 16, 7, 1, 1, 0}, {2, 3, 6, 8, 9, 1, 1, 0}});
    const kernels::KernelIsa isa = kernels::active_kernel_isa();
    if (isa == kernels::KernelIsa::kAvx2FmaVnni || isa == kernels::KernelIsa::kAvx2FmaOnednnVnni) {
      EXPECT_TRUE(kernels::conv2d_s8_pools(geometry(cases[0]),
                                           kernels::Pool2dGeometry::make(10, 10, 2, 2)));
      EXPECT_TRUE(kernels::conv2d_s8_pools(geometry(cases[1]),
                                           kernels::Pool2dGeometry::make(28, 28, 2, 2)));
    }
    if (isa == kernels::KernelIsa::kAvx2Fma || isa == kernels::KernelIsa::kAvx2FmaOnednn ||
        isa == kernels::KernelIsa::kAvx2FmaAvxVnni ||
        isa == kernels::KernelIsa::kAvx2FmaOnednnAvxVnni) {
      EXPECT_TRUE(kernels::conv2d_s8_pools(geometry(cases[1]),
                                           kernels::Pool2dGeometry::make(28, 28, 2, 2)));
      EXPECT_TRUE(kernels::conv2d_s8_pools(geometry(cases.end()[-2]),
                                           kernels::Pool2dGeometry::make(16, 16, 2, 2)));
      EXPECT_TRUE(kernels::conv2d_s8_pools(geometry(cases.back()),
                                           kernels::Pool2dGeometry::make(6, 8, 2, 2)));
    }
    uint64_t seed = 150;
    for (const auto& s : cases) {
      SCOPED_TRACE(describe(s));
      const auto g = geometry(s);
      const auto pool = kernels::Pool2dGeometry::make(g.out_h, g.out_w, 2, 2);
      if (!kernels::conv2d_s8_pools(g, pool)) continue;
      ++fused_cases;
      const std::vector<int8_t> x = random_s8(s.x_numel(), seed, 0, -128),
                                w = random_s8(s.w_numel(), seed++, 1, -128);
      const int64_t pooled = g.out_c * pool.out_plane();
      std::vector<int32_t> y(s.n * pooled, 12345), want(s.n * pooled), sums(s.y_numel());
      std::vector<int32_t> ranges(s.n, -1);
      {
        Work work(kernels::conv2d_s8_work_bytes(g));
        kernels::conv2d_s8_forward_max_pooled(g, pool, s.n, x.data(), w.data(), y.data(),
                                              ranges.data(), work.data());
        kernels::conv2d_s8_forward(g, s.n, x.data(), w.data(), sums.data(), work.data());
      }
      for (int64_t n = 0; n < s.n; ++n)
        EXPECT_EQ(ranges[n],
                  kernels::max_pool2d_s32_forward(pool, g.out_c, sums.data() + n * g.out_numel(),
                                                  want.data() + n * pooled))
            << "image " << n;
      EXPECT_EQ(y, want);
    }
  });
  if (fused_cases == 0)
    GTEST_SKIP() << "no kernel set of this CPU fuses the pooling (the avx2 sets: needs a CPU with "
                    "AVX2)";
}

// The range the fused convolution gives for one image of shape s (x, w) and the range_bits of its
// unfused sums, in every kernel set that fuses this pooling; skips the test where none does.
void expect_fused_range(const ref::ConvShape& s, const std::vector<int8_t>& x,
                        const std::vector<int8_t>& w, int bits) {
  const auto g = geometry(s);
  const auto pool = kernels::Pool2dGeometry::make(g.out_h, g.out_w, 2, 2);
  int fused_sets = 0;
  test::for_each_kernel_isa([&] {
    if (!kernels::conv2d_s8_pools(g, pool)) return;
    ++fused_sets;
    std::vector<int32_t> y(g.out_c * pool.out_plane()), sums(s.y_numel());
    int32_t range = -1;
    Work work(kernels::conv2d_s8_work_bytes(g));
    kernels::conv2d_s8_forward_max_pooled(g, pool, 1, x.data(), w.data(), y.data(), &range,
                                          work.data());
    kernels::conv2d_s8_forward(g, 1, x.data(), w.data(), sums.data(), work.data());
    EXPECT_EQ(kernels::range_bits(sums.data(), s.y_numel()), bits);
    EXPECT_EQ(range, bits);
  });
  if (fused_sets == 0)
    GTEST_SKIP() << "no kernel set of this CPU fuses this pooling (the avx2 sets: needs a CPU "
                    "with AVX2)";
}

// Channel rows compute the positions past out_w of each padded row and drop them: they must stay
// out of the fused range too. A 32x32 image, 5x5 weights of one sign: columns 0-3 hold 103 and
// column 31 holds 127, so the valid sums reach 20 * 103 * 127 < 2^18 at most, where the dropped
// position of column 31 (column 31, then 0-3 of the next row) reaches more than 2^18.
TEST(Int8Conv2d, MaxPooledRangeLeavesOutTheDroppedColumns) {
  const ref::ConvShape s{1, 1, 32, 32, 6, 5, 1, 0};
  std::vector<int8_t> x(s.x_numel(), 0);
  for (int64_t r = 0; r < 32; ++r) {
    for (int64_t c = 0; c < 4; ++c) x[r * 32 + c] = 103;
    x[r * 32 + 31] = 127;
  }
  for (const int8_t sign : {int8_t{1}, int8_t{-1}}) {
    SCOPED_TRACE(testing::Message() << "weights of sign " << int{sign});
    expect_fused_range(s, x, std::vector<int8_t>(s.w_numel(), static_cast<int8_t>(127 * sign)), 18);
  }
}

// The fused range takes both rows of every window: a 1x1 convolution whose one large sum lies
// in an odd row (row 3), below a window's maximum, gives the range of all the sums.
TEST(Int8Conv2d, MaxPooledRangeTakesBothRowsOfAWindow) {
  const ref::ConvShape s{1, 1, 8, 8, 6, 1, 1, 0};
  std::vector<int8_t> x(s.x_numel(), 1);
  x[3 * 8 + 5] = 127;
  std::vector<int8_t> w(s.w_numel());
  for (int64_t o = 0; o < 6; ++o) w[o] = static_cast<int8_t>(-128 + o);
  expect_fused_range(s, x, w, 14);  // -128 x 127
}

// ---- linear layers' forward ----

// linear_s8_forward gives gemm_s8's sums in every set: the x86 sets' packed kernel where A is
// nonnegative and k a multiple of 4 (rows past a tile of 4 or 12, columns past a panel of 16, the
// extremes 127 x -128), the fallback elsewhere (a negative byte, k = 30, 3). Within one key the
// packed weights are reused; a new key packs new ones.
TEST(Int8Linear, ForwardMatchesTheReference) {
  struct Case {
    int64_t m, n, k;
  };
  const Case cases[] = {{1, 10, 84},   {12, 16, 4}, {13, 17, 400}, {30, 120, 400},
                        {25, 84, 120}, {5, 1, 8},   {7, 33, 30},   {3, 5, 3}};
  test::for_each_kernel_isa([&] {
    uint64_t seed = 160;
    for (const Case& t : cases)
      for (const bool negative : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "m " << t.m << " n " << t.n << " k " << t.k
                                          << (negative ? " with a negative byte" : ""));
        std::vector<int8_t> a = random_s8(t.m * t.k, seed, 0, 0, 127);
        if (negative) a[a.size() / 2] = -5;
        Work work(kernels::linear_s8_work_bytes(t.n, t.k));
        const uint64_t key = kernels::new_weights_key();
        for (int round = 0; round < 3; ++round) {
          // Rounds 0 and 1: the same weights under one key; round 2: new weights, a new key.
          const std::vector<int8_t> b = random_s8(t.n * t.k, seed, round < 2 ? 1 : 2, -128);
          std::vector<int32_t> c(t.m * t.n, 12345);
          kernels::linear_s8_forward(t.m, t.n, t.k, a.data(), b.data(), c.data(), work.data(),
                                     round < 2 ? key : kernels::new_weights_key());
          const ref::Vec want = ref::gemm(false, true, t.m, t.n, t.k, 1.0, to_double(a), t.k,
                                          to_double(b), t.k, 0.0, ref::Vec(t.m * t.n), t.n);
          for (int64_t i = 0; i < t.m * t.n; ++i)
            ASSERT_EQ(static_cast<double>(c[i]), want[i]) << "round " << round << " at " << i;
        }
        ++seed;
      }
  });
}

// The largest products, 127 * -128 (or * 127) at every tap.
TEST(Int8Conv2d, ForwardExtremeProductsAreExact) {
  for (int8_t wv : {int8_t{-128}, int8_t{127}}) {
    SCOPED_TRACE(int{wv});
    expect_conv_forward_matches(127, 127, [wv](std::vector<int8_t>&, std::vector<int8_t>& w) {
      std::fill(w.begin(), w.end(), wv);
    });
  }
}

// Every instruction set: stride 1 runs the direct forward kernel on flipped weights where there
// is one, other strides patch matrices.
TEST(Int8Conv2d, BackwardDataMatchesReference) {
  test::for_each_kernel_isa([] {
    for (const auto& s : conv_cases(2)) {
      SCOPED_TRACE(describe(s));
      auto g = geometry(s);
      std::vector<int8_t> dy = random_s8(s.y_numel(), 113, 0, -128),
                          w = random_s8(s.w_numel(), 113, 1, -128);
      std::vector<int32_t> dx(s.x_numel(), -777);  // overwritten
      Work work(kernels::conv2d_s8_work_bytes(g));
      kernels::conv2d_s8_backward_data(g, s.n, dy.data(), w.data(), dx.data(), work.data());
      const ref::Vec want = ref::conv2d_backward_data(s, to_double(dy), to_double(w));
      for (int64_t i = 0; i < s.x_numel(); ++i) ASSERT_EQ(static_cast<double>(dx[i]), want[i]) << i;
    }
  });
}

// dw += the weight gradient summed over the images: starts from nonzero values. Inputs over the
// int8 range and in [0, 127] (ReLU outputs: patches the x86 kernels multiply as unsigned); 3
// images, and twice the images of one product and one more (a last, partial product).
TEST(Int8Conv2d, BackwardWeightAddsIntoDw) {
  test::for_each_kernel_isa([] {
    for (auto s : conv_cases(3))
      for (int64_t images :
           {int64_t{3}, 2 * kernels::conv2d_s8_weight_gradient_images(geometry(s)) + 1})
        for (int lo : {-128, 0}) {
          s.n = images;
          SCOPED_TRACE(describe(s) + " inputs from " + std::to_string(lo));
          auto g = geometry(s);
          std::vector<int8_t> x = random_s8(s.x_numel(), 114, 0, lo),
                              dy = random_s8(s.y_numel(), 114, 1, -128);
          Rng rng(114, 2);
          std::vector<int64_t> dw(s.w_numel());
          for (auto& v : dw) v = random_int(rng, 40);
          ref::Vec want = ref::conv2d_backward_weight(s, to_double(x), to_double(dy));
          for (int64_t i = 0; i < s.w_numel(); ++i) want[i] += static_cast<double>(dw[i]);
          Work work(kernels::conv2d_s8_work_bytes(g));
          kernels::conv2d_s8_backward_weight(g, s.n, x.data(), dy.data(), dw.data(), work.data());
          for (int64_t i = 0; i < s.w_numel(); ++i)
            ASSERT_EQ(static_cast<double>(dw[i]), want[i]) << i;
        }
  });
}

// ---- ReLU and max pooling: the f32 kernels on the same values ----

std::vector<float> to_float(const std::vector<int8_t>& v) {
  return std::vector<float>(v.begin(), v.end());
}

TEST(Int8Relu, MatchesFloatKernel) {
  for (int64_t n : {1, 2, 7, 64, 1001}) {
    SCOPED_TRACE(n);
    std::vector<int8_t> x = random_s8(n, 115, n), dy = random_s8(n, 116, n);
    if (n > 4) x[2] = 0, x[3] = -1, x[4] = 1;
    std::vector<int8_t> y(n, 55), dx(n, 55);
    kernels::relu_s8(x.data(), y.data(), n);
    std::vector<float> xf = to_float(x), yf(n), dyf = to_float(dy), dxf(n);
    kernels::relu_forward(n, xf.data(), yf.data());
    EXPECT_EQ(to_float(y), yf);
    kernels::relu_s8_backward(y.data(), dy.data(), dx.data(), n);
    kernels::relu_backward(n, yf.data(), dyf.data(), dxf.data());
    EXPECT_EQ(to_float(dx), dxf);
    // In place: dx aliasing dy.
    std::vector<int8_t> inplace = dy;
    kernels::relu_s8_backward(y.data(), inplace.data(), inplace.data(), n);
    EXPECT_EQ(inplace, dx);
  }
}

std::vector<ref::PoolShape> pool_cases() {
  // LeNet-5's 2x2 stride-2 pools (even and odd planes), gapped windows, non-square windows;
  // overlapping windows (k > stride) are in MaxPoolOverlappingWindows.
  std::vector<ref::PoolShape> cases = {{6, 28, 28, 2, 2}, {16, 10, 10, 2, 2}, {3, 7, 5, 2, 2},
                                       {2, 5, 8, 2, 2},   {2, 7, 6, 3, 3},    {1, 5, 5, 5, 5},
                                       {2, 8, 7, 2, 3},   {2, 9, 9, 1, 2}};
  // Rows of 4 outputs or more (AVX2: 8 or 4 at a time, the last ones overlapping), odd widths.
  const ref::PoolShape wide[] = {
      {2, 6, 17, 2, 2}, {3, 5, 33, 2, 2}, {2, 4, 21, 2, 2}, {2, 4, 9, 2, 2}, {1, 6, 14, 2, 2}};
  cases.insert(cases.end(), std::begin(wide), std::end(wide));
  Rng rng(117, 0);
  for (int i = 0; i < 10; ++i) {
    const int64_t k = 1 + rng.below(4), stride = k + rng.below(2);
    cases.push_back({1 + rng.below(3), k + rng.below(7), k + rng.below(7), k, stride});
  }
  return cases;
}

// Values from a narrow range give many ties; the wide range includes ±127. The f32 and int32
// kernels give the same maxima.
void expect_max_pool_matches_float(const ref::PoolShape& s, int lo, int hi, uint64_t seed) {
  auto g = kernels::Pool2dGeometry::make(s.h, s.w, s.k, s.stride);
  std::vector<int8_t> x = random_s8(s.x_numel(), seed, 0, lo, hi);
  std::vector<int8_t> dy = random_s8(s.y_numel(), seed, 1);
  std::vector<int8_t> y(s.y_numel(), 77), dx(s.x_numel(), 77);
  std::vector<float> xf = to_float(x), dyf = to_float(dy), yf(s.y_numel()), dxf(s.x_numel());
  kernels::max_pool2d_s8_forward(g, s.planes, x.data(), y.data());
  kernels::max_pool2d_forward(g, s.planes, xf.data(), yf.data());
  EXPECT_EQ(to_float(y), yf);
  // The int32 pooling (of accumulators) on the same values scaled past int16.
  constexpr int32_t kScale = 1000003;
  std::vector<int32_t> x32(x.size()), y32(s.y_numel(), 77);
  for (size_t i = 0; i < x.size(); ++i) x32[i] = x[i] * kScale;
  for (bool range : {true, false}) {  // without the range (the NPU's), the same maxima
    std::fill(y32.begin(), y32.end(), 77);
    kernels::max_pool2d_s32_forward(g, s.planes, x32.data(), y32.data(), range);
    for (int64_t i = 0; i < s.y_numel(); ++i) ASSERT_EQ(y32[i], y[i] * kScale) << i << range;
  }
  kernels::max_pool2d_s8_backward(g, s.planes, x.data(), dy.data(), dx.data());
  kernels::max_pool2d_backward(g, s.planes, xf.data(), dyf.data(), dxf.data());
  EXPECT_EQ(to_float(dx), dxf);
  // And the double reference, which states the tie rule independently.
  const ref::Vec want = ref::max_pool2d_backward(s, to_double(x), to_double(dy));
  for (int64_t i = 0; i < s.x_numel(); ++i) ASSERT_EQ(static_cast<double>(dx[i]), want[i]) << i;
}

std::string describe(const ref::PoolShape& s) {
  return (::testing::Message() << s.planes << "x" << s.h << "x" << s.w << " k" << s.k << " s"
                               << s.stride << " p" << s.pad)
      .GetString();
}

TEST(Int8MaxPool, MatchesFloatKernel) {
  test::for_each_kernel_isa([] {
    uint64_t seed = 118;
    for (const auto& s : pool_cases()) {
      SCOPED_TRACE(describe(s));
      expect_max_pool_matches_float(s, -127, 127, seed++);
      expect_max_pool_matches_float(s, -2, 1, seed++);  // ties everywhere
      expect_max_pool_matches_float(s, 0, 0, seed++);   // all zero: the first element wins
    }
  });
}

// With k > stride a pixel can be the maximum of several windows and its gradient is a sum; the
// values here keep such sums within int8.
// The int32 pooling returns the range of all its input, read in the same pass where it can be:
// one extreme element, of either sign, at the first, a middle and the last position, among small
// values, for even and odd sizes and rows shorter than a vector.
TEST(Int8MaxPool, S32PoolingReturnsTheRangeOfItsWholeInput) {
  test::for_each_kernel_isa([] {
    Rng rng(119, 0);
    for (const ref::PoolShape& s : std::vector<ref::PoolShape>{{2, 6, 17, 2, 2},
                                                               {3, 28, 28, 2, 2},
                                                               {1, 10, 10, 2, 2},
                                                               {2, 7, 9, 2, 2},
                                                               {1, 4, 4, 2, 2},
                                                               {2, 5, 6, 3, 2}}) {
      SCOPED_TRACE(describe(s));
      auto g = kernels::Pool2dGeometry::make(s.h, s.w, s.k, s.stride);
      const int64_t n = s.x_numel();
      // Every position of a small input: each corner of a window in turn (the kernels' narrow
      // rows go element by element; a Debug build once lost every window's bottom-left value).
      std::vector<int64_t> ats = {0, n / 2 + 1, n - 1};
      if (n <= 64) {
        ats.clear();
        for (int64_t a = 0; a < n; ++a) ats.push_back(a);
      }
      for (const int64_t at : ats)
        for (const int32_t extreme : {(1 << 20) + 5, -(1 << 23) - 1, -(1 << 20)}) {
          std::vector<int32_t> x(static_cast<size_t>(n)), y(s.y_numel());
          for (int32_t& v : x) v = static_cast<int32_t>(rng.below(2001)) - 1000;
          x[static_cast<size_t>(at)] = extreme;
          EXPECT_EQ(kernels::max_pool2d_s32_forward(g, s.planes, x.data(), y.data()),
                    kernels::range_bits(x.data(), n))
              << "extreme " << extreme << " at " << at;
        }
    }
  });
}

// Also padded (ResNet's 3x3 of stride 2, padding 1): clipped windows, padding never the maximum.
TEST(Int8MaxPool, MaxPoolOverlappingWindows) {
  for (const ref::PoolShape& s :
       {ref::PoolShape{2, 6, 6, 2, 1}, ref::PoolShape{1, 7, 8, 3, 2},
        ref::PoolShape{2, 8, 8, 3, 2, 1}, ref::PoolShape{1, 7, 5, 3, 2, 1},
        ref::PoolShape{2, 4, 5, 2, 1, 1}}) {
    SCOPED_TRACE(describe(s));
    auto g = kernels::Pool2dGeometry::make(s.h, s.w, s.k, s.stride, s.pad);
    std::vector<int8_t> x = random_s8(s.x_numel(), 130, 0, -127, -1);  // padding as 0 would win
    std::vector<int8_t> dy =
        random_s8(s.y_numel(), 130, 1, -14, 14);  // 9 windows at most: |sum| <= 126
    std::vector<int8_t> y(s.y_numel(), 3), dx(s.x_numel(), 3);
    kernels::max_pool2d_s8_forward(g, s.planes, x.data(), y.data());
    const ref::Vec want_y = ref::max_pool2d(s, to_double(x));
    for (int64_t i = 0; i < s.y_numel(); ++i) ASSERT_EQ(static_cast<double>(y[i]), want_y[i]) << i;
    kernels::max_pool2d_s8_backward(g, s.planes, x.data(), dy.data(), dx.data());
    const ref::Vec want = ref::max_pool2d_backward(s, to_double(x), to_double(dy));
    for (int64_t i = 0; i < s.x_numel(); ++i) ASSERT_EQ(static_cast<double>(dx[i]), want[i]) << i;
  }
}

}  // namespace
}  // namespace zotrain

namespace zotrain {
namespace {

// Staging rows in int16 (round to odd) and finishing with the tensor's shift is requantize on the
// whole tensor, bit for bit, whatever the rows' ranges — including rows near the int32 limits next
// to rows that need no shift at all.
void expect_staged_requantize_matches() {
  Rng rng(77, 0);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t rows = 1 + rng.below(6), n = 1 + rng.below(100);
    std::vector<int32_t> acc(static_cast<size_t>(rows * n));
    for (int64_t r = 0; r < rows; ++r) {
      const int bits = static_cast<int>(rng.below(32));  // this row's magnitude
      for (int64_t i = 0; i < n; ++i) {
        int64_t v = bits == 0 ? 0 : static_cast<int64_t>(rng.next_u32() >> (32 - bits));
        if (rng.below(2)) v = -v;
        if (i == 0 && bits == 31) v = trial % 2 ? INT32_MAX : INT32_MIN + 1;
        acc[r * n + i] = static_cast<int32_t>(v);
      }
    }
    for (int bits : {1, 5, 7}) {
      std::vector<int8_t> want(acc.size()), got(acc.size());
      const int want_shift = kernels::requantize(acc.data(), static_cast<int64_t>(acc.size()), bits,
                                                 kernels::Rounding::kNearest, want.data());
      std::vector<int16_t> stage(acc.size()), given(acc.size());
      std::vector<int32_t> ranges(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) {
        ranges[r] = kernels::stage_s16(acc.data() + r * n, n, stage.data() + r * n);
        // The same rows staged in a range given (as a max-pooled layer knows its own).
        kernels::stage_s16_in_range(acc.data() + r * n, n, ranges[r], given.data() + r * n);
      }
      for (const std::vector<int16_t>* s : {&stage, &given}) {
        EXPECT_EQ(kernels::finish_s16(s->data(), n, rows, ranges.data(), bits, got.data()),
                  want_shift);
        ASSERT_EQ(got, want) << "trial " << trial << " bits " << bits
                             << (s == &given ? " range given" : "");
      }
    }
  }
}

// Every instruction set's kernels; rows of up to 100 elements (AVX2: vectors of 8, 16 and 32
// lanes, and partial ones).
TEST(Int8StagedRequantize, EqualsRequantizeOfTheWholeTensor) {
  test::for_each_kernel_isa([] { expect_staged_requantize_matches(); });
}
}  // namespace
}  // namespace zotrain
