#include "nn/flatten.h"

#include <gtest/gtest.h>

#include "nn/gradient_check.h"

namespace zotrain {
namespace {

TEST(GradCheck, Flatten) {
  Flatten layer;
  EXPECT_EQ(layer.output_shape(Shape{3, 2, 4, 5}), (Shape{3, 40}));
  test::check_gradients(
      layer, test::random_uniform(Shape{3, 2, 4, 5}, 70, 0),
      [](const ref::Vec& x, const std::vector<ref::Vec>&) { return x; }, 70);
}

}  // namespace
}  // namespace zotrain
