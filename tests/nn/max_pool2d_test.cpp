#include "nn/max_pool2d.h"

#include <gtest/gtest.h>

#include <utility>

#include "nn/gradient_check.h"
#include "zotrain/core/rng.h"

namespace zotrain {
namespace {

// A shuffled ramp: all values distinct and at least 2/numel apart, so that a finite-difference
// step never changes which input is a window's maximum.
Tensor distinct_values(const Shape& shape, uint64_t seed) {
  Tensor t = Tensor::zeros(shape);
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i)
    t[i] = -1.0f + 2.0f * static_cast<float>(i) / static_cast<float>(n);
  Rng rng(seed, 0);
  for (int64_t i = n - 1; i > 0; --i) std::swap(t[i], t[rng.below(static_cast<uint32_t>(i + 1))]);
  return t;
}

// Non-overlapping windows with a floored output width, and overlapping windows.
TEST(GradCheck, MaxPool2d) {
  const ref::PoolShape cases[] = {{2 * 3, 6, 7, 2, 2}, {2 * 3, 7, 6, 3, 2}};
  for (const auto& s : cases) {
    MaxPool2d layer(s.k, s.stride);
    test::check_gradients(
        layer, distinct_values(Shape{2, 3, s.h, s.w}, 50),
        [&](const ref::Vec& x, const std::vector<ref::Vec>&) { return ref::max_pool2d(s, x); }, 50);
  }
}

TEST(LayerMaxPool2d, ShapeAndDescription) {
  MaxPool2d layer(2, 2);
  EXPECT_EQ(layer.describe(), "max_pool2d k2 s2");
  EXPECT_EQ(layer.output_shape(Shape{5, 6, 28, 27}), (Shape{5, 6, 14, 13}));
  EXPECT_TRUE(layer.param_specs().empty());
}

TEST(LayerMaxPool2d, SameResultForAnyThreadCount) {
  MaxPool2d layer(2, 2);
  test::expect_same_for_any_thread_count(layer, Shape{3, 5, 6, 6}, 51);
}

}  // namespace
}  // namespace zotrain
