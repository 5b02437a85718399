#include "zotrain/nn/conv2d.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/kernel_isas.h"
#include "nn/gradient_check.h"

namespace zotrain {
namespace {

// Stride 1 and 2, padding, 1x1, a kernel larger than the unpadded input, non-square inputs.
TEST(GradCheck, Conv2d) {
  const ref::ConvShape cases[] = {{2, 3, 7, 6, 4, 3, 1, 0},
                                  {2, 3, 7, 6, 4, 3, 2, 1},
                                  {1, 2, 5, 5, 3, 5, 1, 2},
                                  {2, 4, 3, 4, 2, 1, 1, 0},
                                  {2, 1, 2, 2, 2, 3, 1, 1}};
  uint64_t seed = 30;
  for (const auto& s : cases) {
    SCOPED_TRACE("case " + std::to_string(seed - 30));
    Conv2d layer(s.c, s.out_c, s.k, s.stride, s.pad);
    test::check_gradients(
        layer, test::random_uniform(Shape{s.n, s.c, s.h, s.w}, seed, 0),
        [&](const ref::Vec& x, const std::vector<ref::Vec>& p) {
          return ref::conv2d(s, x, p[0], p[1]);
        },
        seed);
    ++seed;
  }
}

TEST(LayerConv2d, ShapesParamsWorkspaceAndMacs) {
  Conv2d layer(1, 6, 5, 1, 2);  // LeNet-5's first convolution
  const Shape in{4, 1, 28, 28};
  EXPECT_EQ(layer.describe(), "conv2d 1->6 k5 s1 p2");
  EXPECT_EQ(layer.output_shape(in), (Shape{4, 6, 28, 28}));
  auto specs = layer.param_specs();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].shape, (Shape{6, 1, 5, 5}));
  EXPECT_EQ(specs[0].fan_in, 25);
  EXPECT_EQ(specs[1].shape, (Shape{6}));
  EXPECT_EQ(specs[1].fan_in, 25);
  const auto g = kernels::Conv2dGeometry::make(1, 28, 28, 6, 5, 1, 2);
  const int64_t per_thread =
      std::max({kernels::conv2d_forward_work(g), kernels::conv2d_backward_data_work(g),
                kernels::conv2d_backward_weight_work(g)});
  EXPECT_EQ(layer.workspace_floats(in, 3), 3u * per_thread);
  EXPECT_EQ(layer.forward_macs(in), 4 * 6 * 28 * 28 * 25);
  EXPECT_EQ(Conv2d(3, 8, 3, 2, 1).output_shape(Shape{1, 3, 9, 8}), (Shape{1, 8, 5, 4}));
}

// Batch and output channels that 2 and 3 threads split unevenly; LeNet-5's convolutions.
TEST(LayerConv2d, SameResultForAnyThreadCount) {
  test::for_each_kernel_isa([] {
    Conv2d strided(3, 5, 3, 2, 1);
    test::expect_same_for_any_thread_count(strided, Shape{7, 3, 9, 8}, 31);
    Conv2d conv1(1, 6, 5, 1, 2);
    test::expect_same_for_any_thread_count(conv1, Shape{5, 1, 28, 28}, 33);
    Conv2d conv2(6, 16, 5, 1, 0);
    test::expect_same_for_any_thread_count(conv2, Shape{5, 6, 14, 14}, 34);
  });
}

TEST(LayerConv2d, ForwardUsesContextParams) {
  Conv2d layer(2, 3, 3, 1, 1);
  test::expect_forward_uses_context_params(layer, Shape{2, 2, 5, 5}, 32);
}

}  // namespace
}  // namespace zotrain
