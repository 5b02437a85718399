#include "nn/global_max_pool.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "nn/gradient_check.h"

namespace zotrain {
namespace {

// Random inputs have no ties closer than the finite-difference step (with overwhelming
// probability at these sizes), so the max is differentiable there.
TEST(GradCheck, GlobalMaxPool) {
  const Shape in{2, 3, 1, 7};
  GlobalMaxPool layer;
  EXPECT_EQ(layer.output_shape(in), (Shape{2, 3}));
  Tensor x = test::random_uniform(in, 70, 0);
  test::check_gradients(
      layer, x,
      [](const ref::Vec& v, const std::vector<ref::Vec>&) {
        ref::Vec y;
        for (size_t r = 0; r < v.size() / 7; ++r)
          y.push_back(*std::max_element(v.begin() + r * 7, v.begin() + (r + 1) * 7));
        return y;
      },
      70);
}

TEST(LayerGlobalMaxPool, TiesSendTheGradientToTheFirstMaximum) {
  GlobalMaxPool layer;
  Tensor x = Tensor::zeros(Shape{1, 1, 2, 2});
  x[1] = 3, x[3] = 3;
  Tensor y = test::nan_tensor(Shape{1, 1}), dy = Tensor::zeros(Shape{1, 1}),
         dx = test::nan_tensor(x.shape());
  dy[0] = 2;
  layer.forward(x, y, ExecContext{});
  layer.backward(x, y, dy, dx, ExecContext{});
  EXPECT_EQ(y[0], 3);
  EXPECT_EQ(dx[0], 0);
  EXPECT_EQ(dx[1], 2);
  EXPECT_EQ(dx[2], 0);
  EXPECT_EQ(dx[3], 0);
}

TEST(LayerGlobalMaxPool, SameForAnyThreadCount) {
  GlobalMaxPool layer;
  test::expect_same_for_any_thread_count(layer, Shape{3, 5, 1, 9}, 71);
}

}  // namespace
}  // namespace zotrain
