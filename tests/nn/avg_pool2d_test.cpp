#include "nn/avg_pool2d.h"

#include <gtest/gtest.h>

#include "nn/gradient_check.h"

namespace zotrain {
namespace {

TEST(GradCheck, AvgPool2d) {
  const ref::PoolShape cases[] = {{2 * 3, 6, 7, 2, 2}, {2 * 3, 7, 6, 3, 2}};
  for (const auto& s : cases) {
    AvgPool2d layer(s.k, s.stride);
    test::check_gradients(
        layer, test::random_uniform(Shape{2, 3, s.h, s.w}, 60, 0),
        [&](const ref::Vec& x, const std::vector<ref::Vec>&) { return ref::avg_pool2d(s, x); }, 60);
  }
}

TEST(LayerAvgPool2d, ShapeAndDescription) {
  AvgPool2d layer(3, 3);
  EXPECT_EQ(layer.describe(), "avg_pool2d k3 s3");
  EXPECT_EQ(layer.output_shape(Shape{2, 4, 10, 9}), (Shape{2, 4, 3, 3}));
}

}  // namespace
}  // namespace zotrain
