#include "nn/conv2d.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include "kernels/kernel_isas.h"
#include "nn/gradient_check.h"

namespace zotrain {
namespace {

// Stride 1 and 2, padding, 1x1, a kernel larger than the unpadded input, non-square inputs;
// depthwise (stride 1 and 2, and with two outputs per input channel) and grouped.
TEST(GradCheck, Conv2d) {
  const ref::ConvShape cases[] = {{2, 3, 7, 6, 4, 3, 1, 0},    {2, 3, 7, 6, 4, 3, 2, 1},
                                  {1, 2, 5, 5, 3, 5, 1, 2},    {2, 4, 3, 4, 2, 1, 1, 0},
                                  {2, 1, 2, 2, 2, 3, 1, 1},    {2, 3, 6, 5, 3, 3, 1, 1, 3},
                                  {3, 4, 7, 6, 4, 3, 2, 1, 4}, {2, 2, 5, 5, 4, 3, 1, 0, 2},
                                  {2, 4, 5, 6, 6, 3, 1, 1, 2}, {2, 6, 4, 4, 3, 1, 1, 0, 3}};
  uint64_t seed = 30;
  for (const auto& s : cases) {
    SCOPED_TRACE("case " + std::to_string(seed - 30));
    Conv2d layer(s.c, s.out_c, s.k, s.stride, s.pad, s.groups);
    test::check_gradients(
        layer, test::random_uniform(Shape{s.n, s.c, s.h, s.w}, seed, 0),
        [&](const ref::Vec& x, const std::vector<ref::Vec>& p) {
          return ref::conv2d(s, x, p[0], p[1]);
        },
        seed);
    ++seed;
  }
}

// A convolution followed by batch norm goes without bias.
TEST(GradCheck, Conv2dWithoutBias) {
  const ref::ConvShape s{2, 4, 5, 6, 4, 3, 2, 1, 2};
  Conv2d layer(s.c, s.out_c, s.k, s.stride, s.pad, s.groups, false);
  ASSERT_EQ(layer.param_specs().size(), 1u);
  EXPECT_EQ(layer.describe(), "conv2d 4->4 k3 s2 p1 g2 nobias");
  test::check_gradients(
      layer, test::random_uniform(Shape{s.n, s.c, s.h, s.w}, 41, 0),
      [&](const ref::Vec& x, const std::vector<ref::Vec>& p) {
        return ref::conv2d(s, x, p[0], {});
      },
      41);
  test::expect_same_for_any_thread_count(layer, Shape{3, 4, 5, 6}, 42);
  test::expect_forward_uses_context_params(layer, Shape{3, 4, 5, 6}, 43);
}

// Depthwise convolutions on small planes run several groups of an image per call: runs cut by
// the threads' ranges and by the images give the same bits (19 groups, 3 images).
TEST(LayerConv2d, DepthwiseRunsOfGroupsSameForAnyThreadCount) {
  for (int64_t stride : {1, 2}) {
    Conv2d layer(19, 19, 3, stride, 1, 19, stride == 1);  // with and without bias
    test::expect_same_for_any_thread_count(layer, Shape{3, 19, 5, 4}, 44);
    test::expect_forward_uses_context_params(layer, Shape{3, 19, 5, 4}, 45);
  }
}

// The max pooling fused into forward (Network::run's forward-only passes) gives forward and then
// the pooling bit for bit: channel-rows and pixel-rows convolutions (LeNet-5's two), strided
// and overlapping windows, batches that end inside a block of images, perturbed parameters in
// ctx.params, any thread count, and no more workspace than declared.
TEST(LayerConv2d, MaxPooledForwardEqualsForwardThenMaxPooling) {
  using test::bind_random_params, test::nan_tensor, test::random_uniform, test::TestContext;
  struct Case {
    int64_t c, out_c, k, stride, pad, h, w, pool_k, pool_stride, batch;
  };
  const Case cases[] = {{1, 6, 5, 1, 2, 28, 28, 2, 2, 13},
                        {6, 16, 5, 1, 0, 14, 14, 2, 2, 23},
                        {3, 5, 3, 2, 1, 11, 9, 3, 2, 4}};
  test::for_each_kernel_isa([&] {
    for (const Case& s : cases) {
      SCOPED_TRACE(::testing::Message() << s.c << "->" << s.out_c << " k" << s.k << " on " << s.h
                                        << "x" << s.w << ", pool k" << s.pool_k);
      Conv2d layer(s.c, s.out_c, s.k, s.stride, s.pad);
      const Shape in{s.batch, s.c, s.h, s.w};
      const Shape out = layer.output_shape(in);
      const auto pool = kernels::Pool2dGeometry::make(out[2], out[3], s.pool_k, s.pool_stride);
      bind_random_params(layer, 50, 0.0f);
      std::vector<Tensor> other = bind_random_params(layer, 51, 0.0f);
      const Tensor x = random_uniform(in, 52, 0);
      Tensor want = nan_tensor(Shape{s.batch, s.out_c, pool.out_h, pool.out_w});
      {
        TestContext tc(layer, in, nullptr);
        tc.ctx.params = other.data();
        Tensor full = nan_tensor(out);
        layer.forward(x, full, tc.ctx);
        kernels::max_pool2d_forward(pool, s.batch * s.out_c, full.data(), want.data());
      }
      for (int threads : {1, 2, 3}) {
        ThreadPool tp(threads);
        TestContext tc(layer.max_pooled_workspace_floats(in, pool, threads), &tp);
        ASSERT_GT(tc.size, 0u);
        tc.ctx.params = other.data();
        Tensor got = nan_tensor(want.shape());
        layer.forward_max_pooled(x, pool, got, tc.ctx);
        EXPECT_TRUE(test::bitwise_equal(got, want)) << threads << " threads";
      }
    }
  });
  EXPECT_EQ(Conv2d(4, 4, 3, 1, 1, 4)
                .max_pooled_workspace_floats(Shape{2, 4, 8, 8},
                                             kernels::Pool2dGeometry::make(8, 8, 2, 2), 1),
            0u)
      << "grouped convolutions have no fused pooling";
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

// A depthwise convolution costs k * k multiply-adds per output, not in * k * k: each group runs
// on its own channels, with no zeros standing in for the other groups' weights.
TEST(LayerConv2d, GroupsShapesParamsWorkspaceAndMacs) {
  Conv2d depthwise(32, 32, 3, 2, 1, 32);
  const Shape in{2, 32, 16, 16};
  EXPECT_EQ(depthwise.describe(), "conv2d 32->32 k3 s2 p1 g32");
  EXPECT_EQ(depthwise.output_shape(in), (Shape{2, 32, 8, 8}));
  auto specs = depthwise.param_specs();
  EXPECT_EQ(specs[0].shape, (Shape{32, 1, 3, 3}));
  EXPECT_EQ(specs[0].fan_in, 9);
  EXPECT_EQ(specs[1].shape, (Shape{32}));
  EXPECT_EQ(depthwise.forward_macs(in), 2 * 32 * 8 * 8 * 9);
  const auto g = kernels::Conv2dGeometry::make(1, 16, 16, 1, 3, 2, 1);
  const int64_t per_thread =
      std::max({kernels::conv2d_forward_work(g), kernels::conv2d_backward_data_work(g),
                kernels::conv2d_backward_weight_work(g)});
  EXPECT_EQ(depthwise.workspace_floats(in, 2), 2u * per_thread);

  Conv2d grouped(4, 6, 3, 1, 1, 2);
  EXPECT_EQ(grouped.param_specs()[0].shape, (Shape{6, 2, 3, 3}));
  EXPECT_EQ(grouped.forward_macs(Shape{1, 4, 5, 5}), 6 * 25 * 2 * 9);
}

// Batch and output channels that 2 and 3 threads split unevenly; LeNet-5's convolutions.
TEST(LayerConv2d, SameResultForAnyThreadCount) {
  struct Case {
    Conv2d layer;
    Shape in;
  };
  test::for_each_kernel_isa([] {
    Case cases[] = {
        {Conv2d(3, 5, 3, 2, 1), Shape{7, 3, 9, 8}},
        {Conv2d(1, 6, 5, 1, 2), Shape{5, 1, 28, 28}},
        {Conv2d(6, 16, 5, 1, 0), Shape{5, 6, 14, 14}},
        // Output-channel blocks that cut through groups.
        {Conv2d(7, 7, 3, 2, 1, 7), Shape{5, 7, 9, 8}},
        {Conv2d(6, 9, 3, 1, 1, 3), Shape{4, 6, 7, 7}},
        // Pointwise on small planes, which the oneDNN sets compute in products of several
        // images (128 of 1x1, 32 of 2x2, 10 of 4x3): threads take whole products. 257 images of
        // 1x1 end in a product of one column, which oneDNN computes as a matrix-vector product,
        // rounding otherwise: a thread starting a product anywhere else gives another image
        // those bits.
        {Conv2d(1000, 5, 1, 1, 0), Shape{257, 1000, 1, 1}},
        {Conv2d(20, 30, 1, 1, 0), Shape{45, 20, 2, 2}},
        {Conv2d(7, 9, 1, 1, 0), Shape{23, 7, 4, 3}},
    };
    uint64_t seed = 31;
    for (Case& c : cases) test::expect_same_for_any_thread_count(c.layer, c.in, seed++);
  });
}

// Depthwise 3x3 layers (the phase-layout kernels) of several channel counts against the
// reference, on two threads that split batch x channels unevenly.
TEST(LayerConv2d, Depthwise3x3MatchesReference) {
  ThreadPool pool(2);
  test::for_each_kernel_isa([&] {
    for (int64_t c : {1, 3, 8, 13})
      for (auto [h, w, stride, pad] :
           {std::array<int64_t, 4>{7, 9, 1, 1}, {5, 4, 1, 0}, {9, 8, 2, 1}, {6, 11, 2, 0}}) {
        const ref::ConvShape s{3, c, h, w, c, 3, stride, pad, c};
        SCOPED_TRACE(ref::describe(s));
        Conv2d layer(c, c, 3, stride, pad, c);
        const uint64_t seed = 70 + static_cast<uint64_t>(c);
        auto params = test::bind_random_params(layer, seed, 0.0f);
        Tensor x = test::random_uniform(Shape{s.n, c, h, w}, seed, 0);
        Tensor dy = test::random_uniform(layer.output_shape(x.shape()), seed, 1);
        test::Pass p = test::run_pass(layer, x, dy, &pool);
        const ref::Vec wv = ref::to_vec(params[0]), dyv = ref::to_vec(dy);
        EXPECT_TRUE(test::all_close(
            "y", p.y.data(), ref::conv2d(s, ref::to_vec(x), wv, ref::to_vec(params[1])), 1e-5));
        EXPECT_TRUE(
            test::all_close("dx", p.dx.data(), ref::conv2d_backward_data(s, dyv, wv), 1e-5));
        EXPECT_TRUE(test::all_close("dw", p.grads[0].data(),
                                    ref::conv2d_backward_weight(s, ref::to_vec(x), dyv), 1e-5));
      }
  });
}

TEST(LayerConv2d, ForwardUsesContextParams) {
  Conv2d layer(2, 3, 3, 1, 1);
  test::expect_forward_uses_context_params(layer, Shape{2, 2, 5, 5}, 32);
  Conv2d grouped(4, 4, 3, 1, 1, 2);
  test::expect_forward_uses_context_params(grouped, Shape{2, 4, 5, 5}, 37);
}

}  // namespace
}  // namespace zotrain
