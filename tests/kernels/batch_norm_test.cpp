#include "kernels/batch_norm.h"

#include <gtest/gtest.h>

#include <bit>
#include <limits>
#include <vector>

#include "kernels/activation.h"
#include "zotrain/core/rng.h"

namespace zotrain {
namespace {

// Values far from zero with a small spread: a one-pass variance without the pivot would lose
// most of its digits here.
std::vector<float> offset_values(int64_t n, float offset, uint64_t seed) {
  Rng rng(seed, 0);
  std::vector<float> x(n);
  for (float& v : x) v = offset + rng.uniform(-1.0f, 1.0f);
  return x;
}

TEST(KernelBatchNorm, DeviationSumsMatchLongDouble) {
  for (int64_t n : {1, 7, 8, 9, 100, 4099}) {
    const std::vector<float> x = offset_values(n, 1e4f, static_cast<uint64_t>(n));
    const float pivot = x[0];
    long double mean = 0;
    for (float v : x) mean += v;
    mean /= n;
    long double var = 0;
    for (float v : x) var += (v - mean) * (v - mean);
    var /= n;
    const kernels::DeviationSums s = kernels::deviation_sums_f64(n, x.data(), pivot);
    const double shift = s.sum / n;
    EXPECT_NEAR(pivot + shift, static_cast<double>(mean), 1e-9) << n;
    EXPECT_NEAR(s.sq / n - shift * shift, static_cast<double>(var), 1e-9 * (1 + var)) << n;
  }
}

// Four runs in one loop, over three blocks, give each run's own sums added over the blocks in
// order, bit for bit, whatever the length's remainder; runs apart (a gap of 3 values) and back
// to back.
TEST(KernelBatchNorm, SumsOfFourRunsEqualEachRunsSums) {
  constexpr int kLanes = kernels::kRunLanes;
  constexpr int64_t kBlocks = 3;
  auto same = [](double a, double b) {
    return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
  };
  for (int64_t n : {1, 3, 4, 5, 7, 8, 9, 12, 13, 16, 17, 100})
    for (int64_t stride : {n, n + 3}) {
      SCOPED_TRACE(::testing::Message() << n << " values, stride " << stride);
      const int64_t block = kLanes * stride + 2;
      std::vector<float> x = offset_values(kBlocks * block, 0.0f, static_cast<uint64_t>(n));
      const std::vector<float> dy =
          offset_values(kBlocks * block, 0.1f, static_cast<uint64_t>(n + 1));
      float pivot[kLanes];
      double mean[kLanes];
      for (int k = 0; k < kLanes; ++k) {
        for (int64_t b = 0; b < kBlocks; ++b)
          for (int64_t i = 0; i < n; ++i) x[b * block + k * stride + i] += 10.0f * k - 7.5f;
        pivot[k] = x[k * stride + n / 2];
        mean[k] = pivot[k] + 0.3 * k;
      }
      kernels::DeviationSums dev[kLanes];
      kernels::GradientSums grad[kLanes];
      kernels::deviation_sums_f64_runs(n, kBlocks, x.data(), stride, block, pivot, dev);
      kernels::gradient_sums_f64_runs(n, kBlocks, dy.data(), x.data(), stride, block, mean, grad);
      for (int k = 0; k < kLanes; ++k) {
        double sum = 0, sq = 0, sum_dy = 0, dy_dev = 0;
        for (int64_t b = 0; b < kBlocks; ++b) {
          const int64_t o = b * block + k * stride;
          const kernels::DeviationSums d = kernels::deviation_sums_f64(n, x.data() + o, pivot[k]);
          const kernels::GradientSums g =
              kernels::gradient_sums_f64(n, dy.data() + o, x.data() + o, mean[k]);
          sum += d.sum, sq += d.sq, sum_dy += g.dy, dy_dev += g.dy_dev;
        }
        EXPECT_TRUE(same(dev[k].sum, sum) && same(dev[k].sq, sq)) << k;
        EXPECT_TRUE(same(grad[k].dy, sum_dy) && same(grad[k].dy_dev, dy_dev)) << k;
      }
    }
}

TEST(KernelBatchNorm, GradientSumsAndNormalizationMatchPlainLoops) {
  const int64_t n = 1001;
  const std::vector<float> x = offset_values(n, 3.0f, 1), dy = offset_values(n, -0.5f, 2);
  const double mean = 3.01, inv_std = 1.7;
  const kernels::GradientSums g = kernels::gradient_sums_f64(n, dy.data(), x.data(), mean);
  long double sum = 0, dev = 0;
  for (int64_t i = 0; i < n; ++i) {
    sum += dy[i];
    dev += dy[i] * (x[i] - mean);
  }
  EXPECT_NEAR(g.dy, static_cast<double>(sum), 1e-10);
  EXPECT_NEAR(g.dy_dev, static_cast<double>(dev), 1e-10);

  std::vector<float> y(n), dx(n);
  kernels::scale_shift(n, x.data(), 3.0f, 2.0f, 0.25f, y.data());
  kernels::batch_norm_backward_data(n, x.data(), dy.data(), mean, inv_std, 0.5, 0.1, 0.2,
                                    dx.data());
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_FLOAT_EQ(y[i], 2.0f * (x[i] - 3.0f) + 0.25f);
    EXPECT_FLOAT_EQ(dx[i], static_cast<float>(0.5 * (dy[i] - 0.1 - (x[i] - mean) * inv_std * 0.2)));
  }
}

// With relu_cap, the result is relu_forward's on the plain result, bit for bit: values below 0,
// inside (0, cap), at and past the cap, a NaN and -0; in place as well.
TEST(KernelBatchNorm, ScaleShiftWithReluEqualsScaleShiftThenRelu) {
  const int64_t n = 1003;
  std::vector<float> x = offset_values(n, 0.0f, 3);
  for (int64_t i = 0; i < n; ++i) x[i] *= 8.0f;  // [-8, 8): both sides of 0 and of 6
  x[5] = std::numeric_limits<float>::quiet_NaN(), x[6] = 0.0f, x[7] = -0.0f, x[8] = 3.0f;
  for (float cap : {6.0f, kernels::kNoCap}) {
    std::vector<float> want(n), got(n), in_place = x;
    kernels::scale_shift(n, x.data(), 0.5f, 1.5f, 0.25f, want.data());
    kernels::relu_forward(n, want.data(), want.data(), cap);
    kernels::scale_shift(n, x.data(), 0.5f, 1.5f, 0.25f, got.data(), cap);
    kernels::scale_shift(n, in_place.data(), 0.5f, 1.5f, 0.25f, in_place.data(), cap);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i])) << i;
      ASSERT_EQ(std::bit_cast<uint32_t>(in_place[i]), std::bit_cast<uint32_t>(want[i])) << i;
    }
  }
}

// A parameter per element gives scale_shift's bits for each element's parameters.
TEST(KernelBatchNorm, ScaleShiftEachEqualsScaleShiftPerElement) {
  const int64_t n = 67;
  std::vector<float> x = offset_values(n, 0.0f, 4), mean = offset_values(n, 0.5f, 5),
                     scale = offset_values(n, 2.0f, 6), shift = offset_values(n, 0.0f, 7);
  for (int64_t i = 0; i < n; ++i) x[i] *= 8.0f;
  x[3] = std::numeric_limits<float>::quiet_NaN();
  for (float cap : {0.0f, 6.0f}) {
    std::vector<float> got(n);
    kernels::scale_shift_each(n, x.data(), mean.data(), scale.data(), shift.data(), got.data(),
                              cap);
    for (int64_t i = 0; i < n; ++i) {
      float want;
      kernels::scale_shift(1, &x[i], mean[i], scale[i], shift[i], &want, cap);
      ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want)) << i;
    }
  }
}

}  // namespace
}  // namespace zotrain
