#include "zotrain/kernels/npu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
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

// The exact real value x * M0 * 2^(shift - 31) rounded half away from zero (long double holds
// the 62-bit product exactly).
int64_t exact_requantize(int64_t x, FixedMultiplier m) {
  const long double v = std::ldexp(static_cast<long double>(x) * m.m0, m.shift - 31);
  return static_cast<int64_t>(std::round(v));
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
// odd shapes exercise.
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
  };
  test::for_each_kernel_isa([&] {
    Rng rng(3, 2);
    for (const ConvCase& c : cases) {
      const auto& g = c.g;
      const int64_t rows = 3;
      const auto x = random_s8(rows * g.in_c * g.in_h * g.in_w, rng);
      const auto w = random_s8(g.out_c * g.in_c / g.groups * g.kernel * g.kernel, rng);
      std::vector<int32_t> bias;
      if (c.bias)
        for (int64_t o = 0; o < g.out_c; ++o)
          bias.push_back(static_cast<int32_t>(rng.below(20001)) - 10000);
      const FixedMultiplier m = kernels::quantize_multiplier(0.0137);
      std::vector<int8_t> y(static_cast<size_t>(rows * g.out_c * g.out_h() * g.out_w()));
      std::vector<int8_t> work(static_cast<size_t>(g.work_bytes()));
      kernels::conv_s8(g, rows, x.data(), w.data(), c.bias ? bias.data() : nullptr, m, c.lo, c.hi,
                       y.data(), work.data());
      EXPECT_EQ(y, reference_conv(g, rows, x, w, bias, m, c.lo, c.hi))
          << "conv " << g.in_c << "->" << g.out_c << " k" << g.kernel << " s" << g.stride << " p"
          << g.pad << " g" << g.groups;
    }
  });
}

TEST(NpuKernels, PoolsAndAddMatchDoubleArithmetic) {
  Rng rng(5, 3);
  const int64_t planes = 6, h = 7, w = 6, k = 2;
  const auto x = random_s8(planes * h * w, rng);
  const int64_t oh = (h - k) / k + 1, ow = (w - k) / k + 1;
  std::vector<int8_t> mx(planes * oh * ow), av(planes * oh * ow), gm(planes), ga(planes);
  const double m = 0.8;  // the output scale's ratio; 1/(k*k) or 1/(h*w) folded in below
  kernels::max_pool_s8(planes, h, w, k, k, x.data(), mx.data());
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

}  // namespace
}  // namespace zotrain
