#include "zotrain/nn/relu.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace zotrain
