#include "nn/dropout.h"

#include <gtest/gtest.h>

#include "nn/gradient_check.h"
#include "zotrain/core/error.h"
#include "zotrain/nn/layer_spec.h"

namespace zotrain {
namespace {

TEST(GradCheck, DropoutWithTheMaskOfItsKey) {
  Dropout layer(dropout_threshold(0.3));
  const Shape in{4, 37};
  Tensor x = test::random_uniform(in, 70, 0, -2.0f, 2.0f);
  test::check_gradients(
      layer, x,
      [&](const ref::Vec& v, const std::vector<ref::Vec>&) {
        ref::Vec y(v.size());
        // The test context's key is 0.
        for_each_dropout_element(0, dropout_threshold(0.3), 0, in.numel(),
                                 [&](int64_t i, bool kept) { y[i] = kept ? v[i] / 0.7 : 0.0; });
        return y;
      },
      70);
}

// Fraction of the elements of an [rows, cols] pass with `key` that are dropped.
double dropped_share(const Dropout& layer, uint64_t key, Tensor& y) {
  Tensor x = Tensor::zeros(y.shape());
  x.fill(1.0f);
  ExecContext ctx;
  ctx.key = key;
  layer.forward(x, y, ctx);
  int64_t dropped = 0;
  for (int64_t i = 0; i < y.numel(); ++i) {
    EXPECT_TRUE(y[i] == 0.0f || y[i] == static_cast<float>(1 / (1 - layer.rate())));
    dropped += y[i] == 0.0f;
  }
  return static_cast<double>(dropped) / y.numel();
}

TEST(LayerDropout, DropsTheRateOfElementsWithAMaskFixedByTheKey) {
  Dropout layer(dropout_threshold(0.3));
  EXPECT_EQ(layer.describe(), "dropout 0.3");
  Tensor a = Tensor::zeros(Shape{64, 256}), b = Tensor::zeros(a.shape()),
         c = Tensor::zeros(a.shape());
  // 16384 elements: the share's standard deviation is 0.0036.
  EXPECT_NEAR(dropped_share(layer, 5, a), 0.3, 0.015);
  dropped_share(layer, 5, b);
  EXPECT_TRUE(test::bitwise_equal(a, b)) << "same key, same mask";
  EXPECT_NEAR(dropped_share(layer, 6, c), 0.3, 0.015);
  int64_t differ = 0;
  for (int64_t i = 0; i < a.numel(); ++i) differ += a[i] != c[i];
  // Independent masks differ where exactly one drops: 2 * 0.3 * 0.7 = 42 %.
  EXPECT_NEAR(static_cast<double>(differ) / a.numel(), 0.42, 0.02);
}

TEST(LayerDropout, EvaluationIsTheIdentityAndRateZeroKeepsAll) {
  Tensor x = test::random_uniform(Shape{3, 10}, 71, 0);
  Tensor y = test::nan_tensor(x.shape());
  ExecContext eval;
  eval.training = false;
  Dropout(dropout_threshold(0.5)).forward(x, y, eval);
  EXPECT_TRUE(test::bitwise_equal(x, y));
  Tensor z = test::nan_tensor(x.shape());
  Dropout(0).forward(x, z, ExecContext{});
  EXPECT_TRUE(test::bitwise_equal(x, z));
}

TEST(LayerDropout, SameForAnyThreadCount) {
  Dropout layer(dropout_threshold(0.4));
  test::expect_same_for_any_thread_count(layer, Shape{5, 3, 1, 11}, 72);
}

TEST(LayerDropout, RateOutsideZeroToOneIsAnInputErrorAndInsideAnInteger) {
  EXPECT_THROW(LayerSpec::dropout(1.0), InputError);
  EXPECT_THROW(LayerSpec::dropout(-0.1), InputError);
  EXPECT_EQ(LayerSpec::dropout(0.25).drop_below, 1u << 30);
}

}  // namespace
}  // namespace zotrain
