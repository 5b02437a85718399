#include "zotrain/nn/batch_norm.h"

#include <gtest/gtest.h>

#include <cmath>

#include "nn/gradient_check.h"

namespace zotrain {
namespace {

// y = gamma (x - mean) / sqrt(var + eps) + beta per channel, over the batch and the positions.
ref::Vec batch_norm_ref(const Shape& s, const ref::Vec& x, const ref::Vec& gamma,
                        const ref::Vec& beta) {
  const int64_t n = s[0], c = s[1], inner = s.row_numel() / c;
  ref::Vec y(x.size());
  for (int64_t ch = 0; ch < c; ++ch) {
    auto at = [&](int64_t b, int64_t i) { return (b * c + ch) * inner + i; };
    double mean = 0, var = 0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i) mean += x[at(b, i)] / double(n * inner);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i)
        var += (x[at(b, i)] - mean) * (x[at(b, i)] - mean) / double(n * inner);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i)
        y[at(b, i)] =
            gamma[ch] * (x[at(b, i)] - mean) / std::sqrt(var + BatchNorm::kEps) + beta[ch];
  }
  return y;
}

void check(const Shape& in, uint64_t seed) {
  BatchNorm layer(in[1]);
  Tensor x = test::random_uniform(in, seed, 0, -2.0f, 3.0f);
  test::check_gradients(layer, x,
                        [&](const ref::Vec& v, const std::vector<ref::Vec>& p) {
                          return batch_norm_ref(in, v, p[0], p[1]);
                        },
                        seed, {1e-3, 1e-5, 1e-4});
}

TEST(GradCheck, BatchNormOverPointsOfEachChannel) {
  check(Shape{3, 4, 1, 5}, 60);
}
TEST(GradCheck, BatchNormOfFeatures) {
  check(Shape{6, 5}, 61);
}

TEST(LayerBatchNorm, StartsAsAStandardization) {
  BatchNorm layer(2);
  EXPECT_EQ(layer.describe(), "batch_norm 2");
  std::vector<ParamSpec> specs = layer.param_specs();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].value, 1.0f);  // gamma = 1, beta = 0: constant initializations
  EXPECT_EQ(specs[1].value, 0.0f);
  Tensor gamma = Tensor::zeros(Shape{2}), beta = Tensor::zeros(Shape{2});
  gamma.fill(1);
  layer.bind({gamma, beta}, {});
  Tensor x = test::random_uniform(Shape{4, 2, 1, 8}, 62, 0, 5, 9);
  Tensor y = test::nan_tensor(x.shape());
  layer.forward(x, y, ExecContext{});
  for (int64_t c = 0; c < 2; ++c) {
    double sum = 0, sq = 0;
    for (int64_t b = 0; b < 4; ++b)
      for (int64_t i = 0; i < 8; ++i) {
        const double v = y[(b * 2 + c) * 8 + i];
        sum += v, sq += v * v;
      }
    EXPECT_NEAR(sum / 32, 0, 1e-6);
    EXPECT_NEAR(sq / 32, 1, 1e-3);
  }
}

TEST(LayerBatchNorm, SameForAnyThreadCountAndReadsContextParams) {
  BatchNorm layer(7);
  test::expect_same_for_any_thread_count(layer, Shape{3, 7, 1, 6}, 63);
  test::expect_forward_uses_context_params(layer, Shape{3, 7, 1, 6}, 64);
}

}  // namespace
}  // namespace zotrain
