#include "nn/relu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "nn/gradient_check.h"

namespace zotrain {
namespace {

// Inputs keep at least 0.05 away from the kink at 0, far more than the finite-difference step.
TEST(GradCheck, ReLU) {
  Tensor x = test::random_uniform(Shape{3, 2, 4, 5}, 40, 0, 0.05f, 1.0f);
  Tensor sign = test::random_uniform(x.shape(), 40, 1);
  for (int64_t i = 0; i < x.numel(); ++i)
    if (sign[i] < 0) x[i] = -x[i];
  ReLU layer;
  test::check_gradients(
      layer, x, [](const ref::Vec& v, const std::vector<ref::Vec>&) { return ref::relu(v); }, 40);
}

TEST(LayerReLU, RunsInPlace) {
  ReLU layer;
  EXPECT_TRUE(layer.backward_needs_output());
  Tensor x = test::random_uniform(Shape{4, 6}, 41, 0);
  Tensor t = x.clone();
  Tensor dy = test::random_uniform(x.shape(), 41, 1);
  Tensor g = dy.clone();
  ExecContext ctx;
  layer.forward(t, t, ctx);
  layer.backward(x, t, g, g, ctx);
  for (int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_EQ(t[i], x[i] > 0 ? x[i] : 0.0f);
    EXPECT_EQ(g[i], x[i] > 0 ? dy[i] : 0.0f);
  }
}

// ReLU6 with inputs at least 0.05 away from both kinks, 0 and 6.
TEST(GradCheck, ReLU6) {
  Tensor x = test::random_uniform(Shape{3, 2, 4, 5}, 42, 0, -2.0f, 8.0f);
  for (int64_t i = 0; i < x.numel(); ++i)
    for (float kink : {0.0f, 6.0f})
      if (std::abs(x[i] - kink) < 0.05f) x[i] = kink + 0.1f;
  ReLU layer(6);
  EXPECT_EQ(layer.describe(), "relu6");
  test::check_gradients(
      layer, x,
      [](const ref::Vec& v, const std::vector<ref::Vec>&) {
        ref::Vec y;
        for (double e : v) y.push_back(std::min(std::max(e, 0.0), 6.0));
        return y;
      },
      42);
}

TEST(LayerReLU6, RunsInPlaceAndPassesNoGradientAtTheCap) {
  ReLU layer(6);
  Tensor x = Tensor::zeros(Shape{1, 5});
  const float in[] = {-1, 0, 3, 6, 7};
  std::copy(in, in + 5, x.data());
  Tensor dy = Tensor::zeros(x.shape());
  dy.fill(2);
  ExecContext ctx;
  layer.forward(x, x, ctx);
  layer.backward(x, x, dy, dy, ctx);
  const float y[] = {0, 0, 3, 6, 6}, dx[] = {0, 0, 2, 0, 0};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(x[i], y[i]) << i;
    EXPECT_EQ(dy[i], dx[i]) << i;
  }
}

TEST(LayerReLU6, SameForAnyThreadCount) {
  ReLU layer(6);
  test::expect_same_for_any_thread_count(layer, Shape{5, 3, 4, 4}, 43);
}

}  // namespace
}  // namespace zotrain
