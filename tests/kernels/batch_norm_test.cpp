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

}  // namespace
}  // namespace zotrain
