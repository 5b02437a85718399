#include "nn/global_avg_pool.h"

#include <gtest/gtest.h>

#include "nn/gradient_check.h"

namespace zotrain {
namespace {

TEST(GradCheck, GlobalAvgPool) {
  const Shape in{2, 3, 4, 5};
  GlobalAvgPool layer;
  EXPECT_EQ(layer.output_shape(in), (Shape{2, 3}));
  EXPECT_EQ(layer.forward_macs(in), 2 * 3 * 4 * 5);
  test::check_gradients(
      layer, test::random_uniform(in, 72, 0),
      [](const ref::Vec& v, const std::vector<ref::Vec>&) {
        ref::Vec y;
        for (size_t r = 0; r < v.size() / 20; ++r) {
          double sum = 0;
          for (size_t i = 0; i < 20; ++i) sum += v[r * 20 + i];
          y.push_back(sum / 20);
        }
        return y;
      },
      72);
}

TEST(LayerGlobalAvgPool, SameForAnyThreadCount) {
  GlobalAvgPool layer;
  test::expect_same_for_any_thread_count(layer, Shape{3, 5, 3, 3}, 73);
}

}  // namespace
}  // namespace zotrain
