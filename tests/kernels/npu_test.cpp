#include "kernels/npu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernel_isas.h"
#include "zotrain/core/error.h"
#include "zotrain/core/rng.h"

namespace zotrain {
namespace {

using kernels::FixedMultiplier;

std::vector<int8_t> random_s8(int64_t n, Rng& rng) {
  std::vector<int8_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<int8_t>(static_cast<int>(rng.below(255)) - 127);
  return v;
}

// Every int8 value, -128 included.
std::vector<int8_t> random_bytes(int64_t n, Rng& rng) {
  std::vector<int8_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<int8_t>(static_cast<int>(rng.below(256)) - 128);
  return v;
}

// Multipliers for every rounding case: ties (2^-k), saturation, M0 odd, the shift of 64 that
// rounds everything to 0 (below 2^-32), no right shift at all (2^30 and above; products wrap).
std::vector<FixedMultiplier> extreme_multipliers() {
  std::vector<FixedMultiplier> m;
  for (double v : {0.0137, 0.5, 0.25, 0.0625, std::ldexp(1.0, -20), 0.999999999, 1.0, 3.7, 1e-12,
                   1e-9, std::ldexp(1.0, 30), std::ldexp(1.5, 30)})
    m.push_back(kernels::quantize_multiplier(v));
  m.push_back({1 << 30, -31});  // right shift 62, the largest that is no shortcut to 0
  m.push_back({2147483647, 0});
  m.push_back({(1 << 30) + (1 << 29) - 1, 1});  // 1.5 - 2^-30: 1 * M is one below a tie
  m.push_back({1234567891, 33});  // left shifts, which quantize_multiplier never makes
  return m;
}

// The exact real value x * M0 * 2^(shift - 31) rounded half away from zero (long double holds
// the 62-bit product exactly).
int64_t exact_requantize(int64_t x, FixedMultiplier m) {
  const long double v = std::ldexp(static_cast<long double>(x) * m.m0, m.shift - 31);
  return static_cast<int64_t>(std::round(v));
}

// The vectorized quantization equals std::round's ties away from zero, clamped, everywhere:
// exact ties of both signs, the clamp's edges, huge and tiny values, remainders of any length;
// NaN gives -127. Every kernel set.
TEST(NpuKernels, QuantizeIsRoundedDivisionTiesAwayFromZero) {
  std::vector<float> x;
  for (int k = -600; k <= 600; ++k)
    x.push_back(0.25f * static_cast<float>(k));  // ties at scale 0.5
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e30f, -1e30f, 63.25f, -63.25f, 63.75f, -63.75f})
    x.push_back(v);
  Rng rng(5, 0);
  for (int i = 0; i < 997; ++i) x.push_back(static_cast<float>(rng.uniform() * 12.0 - 6.0));
  // Exact ties k + 1/2 of a scale that is not a power of two, 3 * 2^-10 (and of 3.0, among the
  // quarters above): the quotient is the tie itself, a product with the scale's reciprocal may
  // fall a unit in the last place to either side of it.
  for (int k = -130; k <= 129; ++k) x.push_back(std::ldexp(3.0f * (2 * k + 1), -11));
  test::for_each_kernel_isa([&] {
    // The last four: the vector kernels' range of scales, [2^-100, 2^100], at its ends and past
    // them (the portable division).
    for (const double scale : {0.5, 0.0371, 3.0, 1e-3, std::ldexp(3.0, -10), std::ldexp(1.0, -100),
                               std::ldexp(1.0, 100), 1e-35, 1e35}) {
      SCOPED_TRACE(scale);
      for (const size_t n : {x.size(), size_t{7}, size_t{1}, size_t{17}}) {
        std::vector<int8_t> y(n, 99);
        kernels::quantize_s8(x.data(), static_cast<int64_t>(n), scale, y.data());
        for (size_t i = 0; i < n; ++i) {
          const double want =
              std::clamp(std::round(static_cast<double>(x[i]) / scale), -127.0, 127.0);
          ASSERT_EQ(y[i], static_cast<int8_t>(want)) << "x " << x[i];
        }
      }
    }
    // Scales a unit in the last place either side of x / T for ties T of even and odd integer
    // parts: the quotient falls just below or above the tie, a product with the reciprocal onto
    // it (1.5 / 0.6000000000000001: 2.4999999999999996 against 2.5), and a float quotient rounds
    // it to even.
    for (const float v : {1.5f, 3.0f})
      for (const double tie : {2.5, 3.5, 100.5, 101.5})
        for (const double toward : {0.0, 1.0}) {
          const double scale = std::nextafter(v / tie, toward);
          const std::vector<float> same(21, v);
          std::vector<int8_t> y(same.size(), 99);
          kernels::quantize_s8(same.data(), static_cast<int64_t>(same.size()), scale, y.data());
          for (int8_t r : y) ASSERT_EQ(r, std::round(v / scale)) << v << " / " << scale;
        }
    const std::vector<float> nans(19, std::numeric_limits<float>::quiet_NaN());
    std::vector<int8_t> y(nans.size(), 0);
    kernels::quantize_s8(nans.data(), static_cast<int64_t>(nans.size()), 0.5, y.data());
    for (int8_t v : y) EXPECT_EQ(v, -127);
  });
}

TEST(NpuKernels, QuantizeMultiplierRepresentsTheRealValue) {
  for (double m : {1e-9, 0.000123, 0.0078125, 0.3, 0.5, 0.999999999, 1.0, 1.7, 300.0, 1e6}) {
    const FixedMultiplier f = kernels::quantize_multiplier(m);
    EXPECT_GE(f.m0, 1 << 30) << m;
    EXPECT_NEAR(std::ldexp(static_cast<double>(f.m0), f.shift - 31) / m, 1.0, 1e-9) << m;
  }
  EXPECT_THROW(kernels::quantize_multiplier(0.0), InputError);
  EXPECT_THROW(kernels::quantize_multiplier(-1.0), InputError);
  EXPECT_THROW(kernels::quantize_multiplier(NAN), InputError);
}

TEST(NpuKernels, RequantizeIsFixedPointRoundingOfTheDoubleProduct) {
  Rng rng(7, 1);
  for (int t = 0; t < 20000; ++t) {
    const double m = std::exp(rng.uniform(-14.0f, 3.0f));
    const FixedMultiplier f = kernels::quantize_multiplier(m);
    const int bits = 1 + static_cast<int>(rng.below(24));
    const int64_t mag = rng.next_u32() >> (32 - bits);
    const int32_t x = static_cast<int32_t>(rng.below(2) ? -mag : mag);
    const int32_t r = kernels::requantize(x, f);
    ASSERT_EQ(r, exact_requantize(x, f)) << x << " * " << m;
    // Against the real multiplier in double: within rounding, plus M0's relative error 2^-31.
    ASSERT_LE(std::fabs(r - x * m), 0.5 + 1e-9 * std::fabs(x * m) + 1e-12) << x << " * " << m;
  }
  // Ties go away from zero, like std::round.
  const FixedMultiplier half = kernels::quantize_multiplier(0.5);
  EXPECT_EQ(kernels::requantize(3, half), 2);
  EXPECT_EQ(kernels::requantize(-3, half), -2);
  EXPECT_EQ(kernels::requantize(1, half), 1);
}

struct ConvCase {
  kernels::NpuConvGeometry g;
  bool bias;
  int32_t lo, hi;
};

// The convolution's int32 accumulation in double (exact on these integers), then the same
// requantization and clamp.
std::vector<int8_t> reference_conv(const kernels::NpuConvGeometry& g, int64_t rows,
                                   const std::vector<int8_t>& x, const std::vector<int8_t>& w,
                                   const std::vector<int32_t>& bias, FixedMultiplier m, int32_t lo,
                                   int32_t hi) {
  const int64_t oh = g.out_h(), ow = g.out_w(), cg = g.in_c / g.groups, og = g.out_c / g.groups;
  std::vector<int8_t> y(static_cast<size_t>(rows * g.out_c * oh * ow));
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t o = 0; o < g.out_c; ++o)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double acc = bias.empty() ? 0 : bias[o];
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t ky = 0; ky < g.kernel; ++ky)
              for (int64_t kx = 0; kx < g.kernel; ++kx) {
                const int64_t iy = oy * g.stride - g.pad + ky, ix = ox * g.stride - g.pad + kx;
                if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
                const int64_t ic = o / og * cg + c;
                acc += static_cast<double>(x[((n * g.in_c + ic) * g.in_h + iy) * g.in_w + ix]) *
                       w[((o * cg + c) * g.kernel + ky) * g.kernel + kx];
              }
          y[((n * g.out_c + o) * oh + oy) * ow + ox] =
              kernels::clamp_s8(kernels::requantize(static_cast<int32_t>(acc), m), lo, hi);
        }
  return y;
}

// In every instruction set: the sums come from its int8 kernels, whose tiles and tails these
// odd shapes exercise, with inputs over the int8 range and in [0, 127] (ReLU outputs, which the
// AVX2 A.B^T of pointwise and linear layers multiplies as unsigned bytes).
TEST(NpuKernels, ConvMatchesReferenceOnIntegerData) {
  const ConvCase cases[] = {
      {{3, 9, 9, 5, 3, 1, 1, 1}, true, -127, 127},     // padded 3x3, 5 outputs (a partial block)
      {{4, 10, 7, 6, 3, 2, 1, 2}, true, 0, 127},       // grouped, strided, ReLU clamp
      {{6, 9, 11, 9, 3, 1, 1, 3}, false, -127, 127},   // grouped, 3 outputs per group
      {{8, 8, 8, 8, 3, 1, 1, 8}, false, 0, 100},       // depthwise, ReLU6-like clamp
      {{6, 9, 9, 6, 3, 2, 1, 6}, true, -127, 127},     // depthwise strided
      {{5, 7, 10, 5, 5, 2, 2, 5}, true, 0, 127},       // depthwise 5x5, odd sizes
      {{3, 11, 8, 3, 3, 3, 0, 3}, false, -127, 127},   // depthwise stride 3, no padding
      {{5, 6, 6, 7, 1, 1, 0, 1}, true, -127, 127},     // pointwise (no im2col)
      {{5, 7, 7, 4, 1, 2, 0, 1}, false, -127, 127},    // strided 1x1
      {{37, 1, 1, 10, 1, 1, 0, 1}, true, -127, 127},   // a linear layer
      {{131, 1, 1, 17, 1, 1, 0, 1}, true, 0, 127},     // linear, odd sizes past a vector
      {{2, 5, 5, 3, 5, 1, 2, 1}, true, -127, 127},     // 5x5, pad 2
      {{13, 7, 5, 19, 3, 2, 1, 1}, true, -127, 127},   // odd channels, strided, padded
      {{9, 12, 12, 23, 3, 1, 0, 1}, false, 0, 127},    // unpadded, channels past a tile
      {{17, 4, 4, 33, 1, 1, 0, 1}, true, -127, 127},   // pointwise, odd channels
      {{1, 40, 40, 11, 3, 1, 1, 1}, true, -127, 127},  // sums of one image at a time
      // Requantized in the VNNI set's pixel tiles: planes ending in a partial tile (196 = 16 x
      // 12 + 4), of exactly 16 pixels and of fewer than a tile; partial channel panels.
      {{24, 14, 14, 40, 1, 1, 0, 1}, true, -100, 90},
      {{16, 4, 4, 24, 1, 1, 0, 1}, false, 0, 127},
      {{8, 2, 2, 20, 1, 1, 0, 1}, true, -127, 127},
      {{12, 3, 5, 20, 1, 1, 0, 1}, true, -127, 127},  // 15 pixels: one past a whole store
      {{64, 1, 1, 40, 1, 1, 0, 1}, true, -127, 127},  // linear in quads (nonnegative rows)
      {{400, 1, 1, 20, 1, 1, 0, 1}, true, 0, 127},    // long rows: AVX2's dot tiles
  };
  // Multipliers below 2^-1 and above (the vector kernels' two shift forms).
  const FixedMultiplier mults[] = {kernels::quantize_multiplier(0.0137),
                                   kernels::quantize_multiplier(0.73)};
  test::for_each_kernel_isa([&] {
    Rng rng(3, 2);
    for (const ConvCase& c : cases)
      for (const FixedMultiplier& m : mults)
        for (bool nonneg : {false, true}) {
          const auto& g = c.g;
          const int64_t rows = 3;
          auto x = random_s8(rows * g.in_c * g.in_h * g.in_w, rng);
          if (nonneg)
            for (auto& v : x) v = static_cast<int8_t>(v < 0 ? -v : v);
          const auto w = random_s8(g.out_c * g.in_c / g.groups * g.kernel * g.kernel, rng);
          std::vector<int32_t> bias;
          if (c.bias)
            for (int64_t o = 0; o < g.out_c; ++o)
              bias.push_back(static_cast<int32_t>(rng.below(20001)) - 10000);
          std::vector<int8_t> y(static_cast<size_t>(rows * g.out_c * g.out_h() * g.out_w()));
          std::vector<int8_t> work(static_cast<size_t>(g.work_bytes()));
          kernels::conv_s8(g, rows, x.data(), w.data(), c.bias ? bias.data() : nullptr, m, c.lo,
                           c.hi, y.data(), work.data());
          EXPECT_EQ(y, reference_conv(g, rows, x, w, bias, m, c.lo, c.hi))
              << "conv " << g.in_c << "->" << g.out_c << " k" << g.kernel << " s" << g.stride
              << " p" << g.pad << " g" << g.groups << " multiplier " << m.m0 << " * 2^" << m.shift
              << (nonneg ? " nonnegative" : "");
        }
  });
}

// A convolution that writes its max pooling (the int32 sums pooled, then requantized) gives
// the bits of the convolution followed by the pooling: odd planes that floor, 3x3 windows of
// stride 2 (overlapping), planes of more and fewer than 64 positions, blocks of several images,
// both clamps, multipliers below 1 down to the tie and zero cases. Multipliers of 1 and more,
// padded poolings and grouped or linear layers are refused (conv_s8_pools).
TEST(NpuKernels, ConvWritingItsMaxPoolingEqualsConvThenPooling) {
  struct PoolCase {
    kernels::NpuConvGeometry g;
    int64_t k, stride;
    bool bias;
    int32_t lo, hi;
  };
  const PoolCase cases[] = {
      {{1, 28, 28, 6, 5, 1, 2, 1}, 2, 2, true, 0, 127},     // LeNet-5's conv1 and pooling
      {{6, 14, 14, 16, 5, 1, 0, 1}, 2, 2, true, 0, 127},    // conv2: 10x10 to 5x5
      {{3, 9, 11, 5, 3, 1, 0, 1}, 2, 2, false, -127, 127},  // 7x9: the last row and column drop
      {{4, 13, 13, 7, 3, 1, 1, 1}, 3, 2, true, -127, 100},  // overlapping windows
      {{5, 6, 6, 3, 1, 1, 0, 1}, 2, 2, true, 0, 127},       // pointwise
  };
  std::vector<FixedMultiplier> mults;
  for (const FixedMultiplier& m : extreme_multipliers())
    if (m.shift <= 0) mults.push_back(m);
  test::for_each_kernel_isa([&] {
    Rng rng(5, 7);
    for (const PoolCase& c : cases)
      for (const FixedMultiplier& m : mults) {
        const auto& g = c.g;
        const int64_t rows = 5;
        const auto pool = kernels::Pool2dGeometry::make(g.out_h(), g.out_w(), c.k, c.stride, 0);
        ASSERT_TRUE(kernels::conv_s8_pools(g, m, pool));
        const auto x = random_s8(rows * g.in_c * g.in_h * g.in_w, rng);
        const auto w = random_s8(g.out_c * g.in_c * g.kernel * g.kernel, rng);
        std::vector<int32_t> bias;
        for (int64_t o = 0; c.bias && o < g.out_c; ++o)
          bias.push_back(static_cast<int32_t>(rng.below(20001)) - 10000);
        const int32_t* b = c.bias ? bias.data() : nullptr;
        std::vector<int8_t> full(static_cast<size_t>(rows * g.out_c * g.out_h() * g.out_w()));
        std::vector<int8_t> expected(static_cast<size_t>(rows * g.out_c * pool.out_plane()));
        std::vector<int8_t> pooled(expected.size());
        std::vector<int8_t> work(static_cast<size_t>(g.work_bytes(&pool)));
        kernels::conv_s8(g, rows, x.data(), w.data(), b, m, c.lo, c.hi, full.data(), work.data());
        kernels::max_pool_s8(rows * g.out_c, g.out_h(), g.out_w(), c.k, c.stride, 0, full.data(),
                             expected.data());
        kernels::conv_s8(g, rows, x.data(), w.data(), b, m, c.lo, c.hi, pooled.data(), work.data(),
                         &pool);
        EXPECT_EQ(pooled, expected)
            << "conv " << g.in_c << "->" << g.out_c << " on " << g.in_h << "x" << g.in_w
            << ", pool " << c.k << "/" << c.stride << ", multiplier " << m.m0 << " * 2^" << m.shift;
      }
  });
  const kernels::NpuConvGeometry plain{3, 8, 8, 4, 3, 1, 1, 1};
  const auto pool = kernels::Pool2dGeometry::make(8, 8, 2, 2, 0);
  EXPECT_TRUE(kernels::conv_s8_pools(plain, kernels::quantize_multiplier(0.999999999), pool));
  EXPECT_FALSE(kernels::conv_s8_pools(plain, kernels::quantize_multiplier(1.0), pool));
  EXPECT_FALSE(kernels::conv_s8_pools(plain, kernels::quantize_multiplier(0.5),
                                      kernels::Pool2dGeometry::make(8, 8, 2, 2, 1)));
  EXPECT_FALSE(
      kernels::conv_s8_pools({4, 8, 8, 4, 3, 1, 1, 2}, kernels::quantize_multiplier(0.5), pool));
  EXPECT_FALSE(kernels::conv_s8_pools({4, 1, 1, 4, 1, 1, 0, 1}, kernels::quantize_multiplier(0.5),
                                      kernels::Pool2dGeometry::make(1, 1, 1, 1, 0)));
}

TEST(NpuKernels, PoolsAndAddMatchDoubleArithmetic) {
  Rng rng(5, 3);
  const int64_t planes = 6, h = 7, w = 6, k = 2;
  const auto x = random_s8(planes * h * w, rng);
  const int64_t oh = (h - k) / k + 1, ow = (w - k) / k + 1;
  std::vector<int8_t> mx(planes * oh * ow), av(planes * oh * ow), gm(planes), ga(planes);
  const double m = 0.8;  // the output scale's ratio; 1/(k*k) or 1/(h*w) folded in below
  kernels::max_pool_s8(planes, h, w, k, k, 0, x.data(), mx.data());
  kernels::avg_pool_s8(planes, h, w, k, k, x.data(), kernels::quantize_multiplier(m / (k * k)),
                       av.data());
  kernels::global_max_pool_s8(planes, h * w, x.data(), gm.data());
  kernels::global_avg_pool_s8(planes, h * w, x.data(), kernels::quantize_multiplier(m / (h * w)),
                              ga.data());
  for (int64_t p = 0; p < planes; ++p) {
    double gsum = 0;
    int gmax = -128;
    for (int64_t i = 0; i < h * w; ++i) {
      gsum += x[p * h * w + i];
      gmax = std::max<int>(gmax, x[p * h * w + i]);
    }
    EXPECT_EQ(gm[p], gmax);
    EXPECT_EQ(ga[p], std::round(gsum * m / (h * w)));
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        double sum = 0;
        int best = -128;
        for (int64_t ky = 0; ky < k; ++ky)
          for (int64_t kx = 0; kx < k; ++kx) {
            const int v = x[(p * h + oy * k + ky) * w + ox * k + kx];
            sum += v;
            best = std::max(best, v);
          }
        EXPECT_EQ(mx[(p * oh + oy) * ow + ox], best);
        EXPECT_EQ(av[(p * oh + oy) * ow + ox], std::round(sum * m / (k * k)));
      }
  }

  // Residual add: both branches rescaled to the output scale, summed, rounded once.
  const int64_t n = 5000;
  const auto a = random_s8(n, rng), b = random_s8(n, rng);
  const double ma = 0.6137, mb = 0.2719;
  std::vector<int8_t> y(n), r(n);
  kernels::add_s8(n, a.data(), kernels::quantize_multiplier(ma), b.data(),
                  kernels::quantize_multiplier(mb), -127, 127, y.data());
  kernels::add_s8(n, a.data(), kernels::quantize_multiplier(ma), b.data(),
                  kernels::quantize_multiplier(mb), 0, 127, r.data());
  for (int64_t i = 0; i < n; ++i) {
    const double exact = a[i] * ma + b[i] * mb, v = std::round(exact);
    // Only a near-tie may round the other way (the branch products keep 16 fraction bits).
    if (std::fabs(std::fabs(exact - std::trunc(exact)) - 0.5) < 1e-4) continue;
    ASSERT_EQ(y[i], std::clamp(v, -127.0, 127.0)) << int{a[i]} << " " << int{b[i]};
    ASSERT_EQ(r[i], std::clamp(v, 0.0, 127.0));
  }
}

// Each instruction set's requantization of int32 values against the scalar requantize: the
// values are the biases of a linear layer and of convolutions that add up nothing
// (zero inputs or weights), chosen around the extremes of int32 and on rounding ties.
TEST(NpuKernels, RequantizationIsScalarRequantizeOnEveryIsa) {
  Rng rng(11, 4);
  for (const FixedMultiplier m : extreme_multipliers()) {
    std::vector<int32_t> bias = {0,
                                 1,
                                 -1,
                                 std::numeric_limits<int32_t>::max(),
                                 std::numeric_limits<int32_t>::min(),
                                 std::numeric_limits<int32_t>::min() + 1};
    // Ties x * M0 = (2j + 1) 2^(right - 1), where M0 is a power of two: both signs, rounded
    // to int8 values.
    const int t = 30 - m.shift - std::countr_zero(static_cast<uint32_t>(m.m0));
    if (std::has_single_bit(static_cast<uint32_t>(m.m0)) && t >= 0 && t <= 22)
      for (int64_t j = -140; j <= 140; ++j) bias.push_back(static_cast<int32_t>((2 * j + 1) << t));
    while (bias.size() < 1003) {  // all magnitudes, and an odd count
      const int bits = 1 + static_cast<int>(rng.below(31));
      const int64_t mag = rng.next_u32() >> (32 - bits);
      bias.push_back(static_cast<int32_t>(rng.below(2) ? -mag : mag));
    }
    const auto n = static_cast<int64_t>(bias.size());
    std::vector<int8_t> expected;
    for (int32_t b : bias)
      expected.push_back(kernels::clamp_s8(kernels::requantize(b, m), -128, 127));
    test::for_each_kernel_isa([&] {
      const kernels::NpuConvGeometry linear{1, 1, 1, n, 1, 1, 0, 1};
      const std::vector<int8_t> x(1, 0), w(static_cast<size_t>(n), 1);
      std::vector<int8_t> y(static_cast<size_t>(n));
      std::vector<int8_t> work(static_cast<size_t>(linear.work_bytes()));
      kernels::conv_s8(linear, 1, x.data(), w.data(), bias.data(), m, -128, 127, y.data(),
                       work.data());
      ASSERT_EQ(y, expected) << m.m0 << " " << m.shift;
      // 2x2 planes of one channel per bias, each output the bias alone.
      const kernels::NpuConvGeometry depthwise{n, 2, 2, n, 3, 1, 1, n};
      const auto dx = random_bytes(n * 4, rng);
      const std::vector<int8_t> dw(static_cast<size_t>(n * 9), 0);
      std::vector<int8_t> dy(static_cast<size_t>(n * 4));
      kernels::conv_s8(depthwise, 1, dx.data(), dw.data(), bias.data(), m, -128, 127, dy.data(),
                       nullptr);
      for (int64_t c = 0; c < n; ++c)
        for (int64_t j = 0; j < 4; ++j)
          ASSERT_EQ(dy[c * 4 + j], expected[c]) << "channel " << c << " " << m.m0 << " " << m.shift;
      // 9x9 planes of a 1x1 convolution, one channel per bias: the bias added as a plane is
      // requantized (planes of 64 positions or more), over vectors and a tail.
      const kernels::NpuConvGeometry planes{1, 9, 9, n, 1, 1, 0, 1};
      const auto px = random_bytes(81, rng);
      std::vector<int8_t> py(static_cast<size_t>(n * 81));
      std::vector<int8_t> pwork(static_cast<size_t>(planes.work_bytes()));
      kernels::conv_s8(planes, 1, px.data(), dw.data(), bias.data(), m, -128, 127, py.data(),
                       pwork.data());
      for (int64_t c = 0; c < n; ++c)
        for (int64_t j = 0; j < 81; ++j)
          ASSERT_EQ(py[c * 81 + j], expected[c]) << "plane " << c << " " << m.m0 << " " << m.shift;
    });
  }
}

// Depthwise convolutions of every stride, padding and kernel size (beyond 7x7 the portable
// taps), on int8 data of the whole range and on nonnegative data (ReLU outputs, which the x86
// taps multiply as unsigned bytes in quads), large biases, and multipliers that round ties and
// saturate; enough images that several share the phases, and chunks of them.
TEST(NpuKernels, DepthwiseMatchesReferenceOnFullRangeData) {
  const kernels::NpuConvGeometry shapes[] = {
      {6, 28, 28, 6, 3, 1, 1, 6},  // MobileNetV2's shapes
      {6, 28, 28, 6, 3, 2, 1, 6},
      {5, 7, 7, 5, 3, 1, 1, 5},
      {5, 7, 7, 5, 3, 2, 1, 5},
      {4, 4, 4, 4, 3, 1, 1, 4},
      {4, 2, 2, 4, 3, 1, 1, 4},
      {3, 1, 1, 3, 3, 1, 1, 3},
      {3, 9, 13, 3, 5, 2, 2, 3},   // 5x5
      {3, 11, 8, 3, 3, 3, 0, 3},   // stride 3, no padding
      {2, 10, 9, 2, 7, 1, 3, 2},   // 7x7, the most taps of the vector kernel
      {2, 12, 12, 2, 9, 2, 4, 2},  // 9x9: the portable taps in every set
      {2, 5, 6, 2, 1, 1, 0, 2},    // 1x1
      {2, 45, 41, 2, 3, 1, 1, 2},  // images in several chunks, the last one partial
      // Planes staged by 16-byte chunks (byte_gather.h) across rows: stride 1 16 and 17 wide,
      // no padding; stride 2 32 and 33 wide, 31 without padding. The 2x2 and 1x1 planes above
      // are smaller than a chunk.
      {3, 6, 16, 3, 3, 1, 1, 3},
      {3, 5, 17, 3, 3, 1, 1, 3},
      {3, 9, 14, 3, 3, 1, 0, 3},
      {3, 9, 32, 3, 3, 2, 1, 3},
      {3, 6, 33, 3, 3, 2, 1, 3},
      {3, 6, 31, 3, 3, 2, 0, 3},
  };
  const auto multipliers = extreme_multipliers();
  test::for_each_kernel_isa([&] {
    Rng rng(13, 5);
    for (const auto& g : shapes)
      for (size_t i = 0; i < 2 * multipliers.size(); ++i) {
        const FixedMultiplier m = multipliers[i / 2];
        const bool nonneg = i % 2 == 1;
        const int64_t rows = i % 3 == 2 ? 1 : 17;
        auto x = random_bytes(rows * g.in_c * g.in_h * g.in_w, rng);
        if (nonneg)
          for (auto& v : x) v = static_cast<int8_t>(v & 127);
        const auto w = random_bytes(g.in_c * g.kernel * g.kernel, rng);
        std::vector<int32_t> bias;
        for (int64_t c = 0; c < g.in_c; ++c)
          bias.push_back(static_cast<int32_t>(rng.below(1u << 21)) - (1 << 20));
        const bool with_bias = (i / 2 + i) % 2 == 0;  // with and without, either data
        const int32_t lo = i % 3 == 0 ? 0 : -128, hi = i % 3 == 1 ? 100 : 127;
        std::vector<int8_t> y(static_cast<size_t>(rows * g.out_c * g.out_h() * g.out_w()));
        kernels::conv_s8(g, rows, x.data(), w.data(), with_bias ? bias.data() : nullptr, m, lo, hi,
                         y.data(), nullptr);
        ASSERT_EQ(
            y, reference_conv(g, rows, x, w, with_bias ? bias : std::vector<int32_t>{}, m, lo, hi))
            << rows << " x " << g.in_c << "x" << g.in_h << "x" << g.in_w << " k" << g.kernel << " s"
            << g.stride << " p" << g.pad << ", multiplier " << m.m0 << " " << m.shift
            << (nonneg ? ", nonnegative" : "");
      }
  });
}

// The residual add on every pair of int8 values, in every instruction set, against the portable
// kernels; ties and saturation included. With both multipliers 1/2 the sum is exact before its
// one rounding, so ties must go away from zero.
TEST(NpuKernels, AddIsPortableOnEveryPairOfValues) {
  std::vector<int8_t> a, b;
  for (int i = -128; i < 128; ++i)
    for (int j = -128; j < 128; ++j) {
      a.push_back(static_cast<int8_t>(i));
      b.push_back(static_cast<int8_t>(j));
    }
  a.resize(a.size() + 13, -128);  // a partial last vector
  b.resize(b.size() + 13, 127);
  const auto n = static_cast<int64_t>(a.size());
  // The last pairs' first branches shift left or not at all (multipliers from 2^14 on).
  const std::pair<double, double> multipliers[] = {{0.5, 0.5},     {0.6137, 0.2719}, {3.7, 2.1},
                                                   {0.0137, 1.9},  {1e-6, 0.25},     {20000.0, 0.3},
                                                   {123457.0, 0.3}};
  for (const auto& [ma, mb] : multipliers)
    for (const auto& [lo, hi] : {std::pair{-128, 127}, std::pair{0, 100}}) {
      std::vector<int8_t> portable;  // the first set (kernel_isas.h) is the portable one
      test::for_each_kernel_isa([&] {
        std::vector<int8_t> y(static_cast<size_t>(n));
        kernels::add_s8(n, a.data(), kernels::quantize_multiplier(ma), b.data(),
                        kernels::quantize_multiplier(mb), lo, hi, y.data());
        if (portable.empty())
          portable = y;
        else
          ASSERT_EQ(y, portable) << ma << " " << mb;
      });
      if (ma == 0.5 && mb == 0.5) {
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(portable[i], std::clamp(std::round((a[i] + b[i]) / 2.0), 1.0 * lo, 1.0 * hi))
              << int{a[i]} << " + " << int{b[i]};
      }
    }
}

}  // namespace
}  // namespace zotrain
