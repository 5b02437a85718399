#include "nn/batch_norm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "nn/gradient_check.h"
#include "nn/relu.h"
#include "test_util.h"

namespace zotrain {
namespace {

void check(const Shape& in, uint64_t seed) {
  BatchNorm layer(in[1]);
  Tensor x = test::random_uniform(in, seed, 0, -2.0f, 3.0f);
  test::check_gradients(layer, x,
                        [&](const ref::Vec& v, const std::vector<ref::Vec>& p) {
                          return ref::batch_norm(in, v, p[0], p[1], BatchNorm::kEps);
                        },
                        seed, {1e-3, 1e-5, 1e-4});
}

TEST(GradCheck, BatchNormOverPointsOfEachChannel) {
  check(Shape{3, 4, 1, 5}, 60);
}
TEST(GradCheck, BatchNormOfFeatures) {
  check(Shape{6, 5}, 61);
}

TEST(LayerBatchNorm, StartsAsAStandardization) {
  BatchNorm layer(2);
  EXPECT_EQ(layer.describe(), "batch_norm 2");
  std::vector<ParamSpec> specs = layer.param_specs();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].value, 1.0f);  // gamma = 1, beta = 0: constant initializations
  EXPECT_EQ(specs[1].value, 0.0f);
  Tensor gamma = Tensor::zeros(Shape{2}), beta = Tensor::zeros(Shape{2});
  gamma.fill(1);
  layer.bind({gamma, beta}, {});
  Tensor x = test::random_uniform(Shape{4, 2, 1, 8}, 62, 0, 5, 9);
  Tensor y = test::nan_tensor(x.shape());
  layer.forward(x, y, ExecContext{});
  for (int64_t c = 0; c < 2; ++c) {
    double sum = 0, sq = 0;
    for (int64_t b = 0; b < 4; ++b)
      for (int64_t i = 0; i < 8; ++i) {
        const double v = y[(b * 2 + c) * 8 + i];
        sum += v, sq += v * v;
      }
    EXPECT_NEAR(sum / 32, 0, 1e-6);
    EXPECT_NEAR(sq / 32, 1, 1e-3);
  }
}

TEST(LayerBatchNorm, SameForAnyThreadCountAndReadsContextParams) {
  BatchNorm layer(7);
  test::expect_same_for_any_thread_count(layer, Shape{3, 7, 1, 6}, 63);
  test::expect_forward_uses_context_params(layer, Shape{3, 7, 1, 6}, 64);
}

// Small planes take the channels several at a time (a loop over 4 channels' sums, blocks of
// channels for the scaling), larger ones one at a time: channel counts with remainders in both,
// features (one value a channel), and a plane of 81 values; against the double reference
// (forward and backward), and the same for any thread count.
TEST(LayerBatchNorm, ChannelBlocksNormalizeEachChannel) {
  for (const Shape& in : {Shape{3, 301, 2, 2}, Shape{5, 1027}, Shape{2, 6, 9, 9}}) {
    BatchNorm layer(in[1]);
    Tensor gamma = test::random_uniform(Shape{in[1]}, 67, 0, 0.5f, 2.0f);
    Tensor beta = test::random_uniform(Shape{in[1]}, 67, 1);
    layer.bind({gamma, beta}, {});
    const Tensor x = test::random_uniform(in, 68, 0, -3.0f, 5.0f);
    Tensor y = test::nan_tensor(in);
    layer.forward(x, y, ExecContext{});
    const ref::Vec want =
        ref::batch_norm(in, ref::to_vec(x), ref::to_vec(gamma), ref::to_vec(beta), BatchNorm::kEps);
    for (int64_t i = 0; i < in.numel(); ++i) ASSERT_NEAR(y[i], want[i], 2e-4) << i;
    test::expect_same_for_any_thread_count(layer, in, 69);
    if (in.numel() < 2000) check(in, 70);
  }
}

// Binds gamma = 2, beta = 1 and running statistics (mean 0, variance 1, as initialized).
struct BoundBatchNorm {
  explicit BoundBatchNorm(int64_t c) : layer(c) {
    gamma.fill(2), beta.fill(1), running_var.fill(1);
    layer.bind({gamma, beta}, {});
    layer.bind_state({running_mean, running_var});
  }
  BatchNorm layer;
  Tensor gamma = Tensor::zeros(Shape{2}), beta = Tensor::zeros(Shape{2});
  Tensor running_mean = Tensor::zeros(Shape{2}), running_var = Tensor::zeros(Shape{2});
};

TEST(LayerBatchNorm, TrainingPassesMoveTheRunningStatisticsOnlyWhenAsked) {
  BoundBatchNorm bn(2);
  ASSERT_EQ(bn.layer.state_specs().size(), 2u);
  EXPECT_EQ(bn.layer.state_specs()[1].value, 1.0f);
  // Channel 0 holds 1, 2, 3, 4 (mean 2.5, unbiased variance 5/3), channel 1 holds 10 four times.
  Tensor x = Tensor::zeros(Shape{4, 2});
  for (int b = 0; b < 4; ++b) x[b * 2] = b + 1.0f, x[b * 2 + 1] = 10;
  Tensor y = Tensor::zeros(x.shape());
  bn.layer.forward(x, y, ExecContext{});
  EXPECT_EQ(bn.running_mean[0], 0.0f);
  ExecContext update;
  update.update_stats = true;
  bn.layer.forward(x, y, update);
  EXPECT_NEAR(bn.running_mean[0], 0.25, 1e-6);  // 0.9 * 0 + 0.1 * 2.5
  EXPECT_NEAR(bn.running_var[0], 0.9 + 0.1 * 5.0 / 3, 1e-6);
  EXPECT_NEAR(bn.running_mean[1], 1.0, 1e-6);
  EXPECT_NEAR(bn.running_var[1], 0.9, 1e-6);
  // The batch's own statistics normalize a training pass whatever the running ones are.
  EXPECT_NEAR(y[1], 1.0, 1e-5);  // channel 1 is constant: xhat = 0, y = beta
}

TEST(LayerBatchNorm, EvaluationNormalizesByTheRunningStatistics) {
  BoundBatchNorm bn(2);
  bn.running_mean[0] = 3, bn.running_var[0] = 4, bn.running_mean[1] = -1, bn.running_var[1] = 0.25;
  Tensor x = Tensor::zeros(Shape{1, 2, 1, 3});
  for (int i = 0; i < 6; ++i) x[i] = static_cast<float>(i);
  Tensor y = test::nan_tensor(x.shape());
  ExecContext eval;
  eval.training = false;
  eval.update_stats = true;  // ignored: evaluation never moves the statistics
  bn.layer.forward(x, y, eval);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(y[i], 2 * (i - 3) / std::sqrt(4 + BatchNorm::kEps) + 1, 1e-5);
    EXPECT_NEAR(y[3 + i], 2 * (i + 3 + 1) / std::sqrt(0.25 + BatchNorm::kEps) + 1, 1e-4);
  }
  EXPECT_EQ(bn.running_mean[0], 3.0f);
}

// forward_relu is forward then a ReLU (ReLU6: cap 6), bit for bit, in training (the running
// statistics moved alike) and in evaluation, and in place (y over x) as well.
TEST(LayerBatchNorm, ForwardReluEqualsForwardThenRelu) {
  for (bool training : {true, false}) {
    BoundBatchNorm want(2), got(2), in_place(2);
    const Tensor x = test::random_uniform(Shape{3, 2, 2, 5}, 65, 0, -4.0f, 9.0f);
    ExecContext ctx;
    ctx.training = training;
    ctx.update_stats = true;
    Tensor y = test::nan_tensor(x.shape()), fused = test::nan_tensor(x.shape()), same = x.clone();
    want.layer.forward(x, y, ctx);
    ReLU(6.0f).forward(y, y, ctx);
    got.layer.forward_relu(x, fused, 6.0f, ctx);
    in_place.layer.forward_relu(same, same, 6.0f, ctx);
    EXPECT_TRUE(test::bitwise_equal(fused, y)) << training;
    EXPECT_TRUE(test::bitwise_equal(same, y)) << training;
    EXPECT_TRUE(test::bitwise_equal(got.running_mean, want.running_mean));
    EXPECT_TRUE(test::bitwise_equal(got.running_var, want.running_var));
  }
}

// Statistics kept from a training forward (ExecContext::stats) give backward, and a forward that
// reads them, the results of computing them from x, bit for bit.
TEST(LayerBatchNorm, KeptStatisticsGiveTheResultsOfComputedOnes) {
  BoundBatchNorm bn(2);
  ASSERT_EQ(bn.layer.kept_stats_doubles(Shape{3, 2, 2, 5}), 6u);
  const Tensor x = test::random_uniform(Shape{3, 2, 2, 5}, 66, 0, -4.0f, 9.0f);
  const Tensor dy = test::random_uniform(x.shape(), 66, 1);
  Tensor gw = Tensor::zeros(Shape{2}), gb = Tensor::zeros(Shape{2});
  Tensor gw_kept = Tensor::zeros(Shape{2}), gb_kept = Tensor::zeros(Shape{2});
  ExecContext plain;
  Tensor y = test::nan_tensor(x.shape()), dx = test::nan_tensor(x.shape());
  bn.layer.bind({bn.gamma, bn.beta}, {gw, gb});
  bn.layer.forward(x, y, plain);
  bn.layer.backward(x, y, dy, dx, plain);
  std::vector<double> stats(6, std::nan(""));
  ExecContext keep;
  keep.stats = stats.data();
  Tensor y_kept = test::nan_tensor(x.shape()), dx_kept = test::nan_tensor(x.shape());
  bn.layer.bind({bn.gamma, bn.beta}, {gw_kept, gb_kept});
  bn.layer.forward(x, y_kept, keep);  // writes the statistics
  ExecContext kept = keep;
  kept.stats_kept = true;
  Tensor y_read = test::nan_tensor(x.shape());
  bn.layer.forward(x, y_read, kept);  // reads them
  bn.layer.backward(x, y_kept, dy, dx_kept, kept);
  EXPECT_TRUE(test::bitwise_equal(y_kept, y));
  EXPECT_TRUE(test::bitwise_equal(y_read, y));
  EXPECT_TRUE(test::bitwise_equal(dx_kept, dx));
  EXPECT_TRUE(test::bitwise_equal(gw_kept, gw));
  EXPECT_TRUE(test::bitwise_equal(gb_kept, gb));
  // The backward did read them: other statistics change its result.
  for (double& v : stats) v *= 1.5;
  bn.layer.backward(x, y_kept, dy, dx_kept, kept);
  EXPECT_FALSE(test::bitwise_equal(dx_kept, dx));
}

// backward_relu from the ReLU's dy gives the ReLU's backward and then batch norm's, bit for bit,
// without their outputs: on the small planes' four-channel loops (with a remainder), large planes
// and features; ReLU and ReLU6; statistics computed and kept. The gate is open and closed on
// many values, at both ends of ReLU6.
TEST(LayerBatchNorm, BackwardReluEqualsReluBackwardThenBackward) {
  for (const Shape& in :
       {Shape{3, 8, 2, 2}, Shape{3, 6, 2, 3}, Shape{2, 3, 9, 9}, Shape{7, 5}, Shape{1, 4, 1, 70}})
    for (const float cap : {6.0f, kernels::kNoCap})
      for (const bool keep : {false, true}) {
        SCOPED_TRACE(in.str() + " cap " + std::to_string(cap) + (keep ? " kept" : ""));
        const int64_t c = in[1];
        BatchNorm layer(c);
        Tensor gamma = test::random_uniform(Shape{c}, 67, 0, -5.0f, 8.0f);
        Tensor beta = test::random_uniform(Shape{c}, 67, 1, -1.0f, 3.0f);
        const Tensor x = test::random_uniform(in, 67, 2, -4.0f, 9.0f);
        const Tensor dy = test::random_uniform(in, 67, 3);
        std::vector<double> stats(3 * c, std::nan(""));
        ExecContext ctx;
        ctx.training = true;
        if (keep) ctx.stats = stats.data();
        Tensor y = test::nan_tensor(in), grad = test::nan_tensor(in), dx = test::nan_tensor(in);
        Tensor gw = Tensor::zeros(Shape{c}), gb = Tensor::zeros(Shape{c});
        layer.bind({gamma, beta}, {gw, gb});
        layer.forward(x, y, ctx);
        ReLU(cap).forward(y, y, ctx);
        int open = 0;
        for (int64_t i = 0; i < y.numel(); ++i) open += y[i] > 0.0f && y[i] < cap;
        EXPECT_GT(open, y.numel() / 5);
        EXPECT_LT(open, y.numel() * 4 / 5);
        if (cap == 6.0f) {
          EXPECT_GT(std::count(y.data(), y.data() + y.numel(), 6.0f), 0);
        }
        ExecContext back = ctx;
        back.stats_kept = keep;
        ReLU(cap).backward(y, y, dy, grad, back);
        layer.backward(x, y, grad, dx, back);
        Tensor gw_fused = Tensor::zeros(Shape{c}), gb_fused = Tensor::zeros(Shape{c});
        Tensor dx_fused = test::nan_tensor(in), none;
        layer.bind({gamma, beta}, {gw_fused, gb_fused});
        layer.backward_relu(x, dy, dx_fused, cap, back);
        EXPECT_TRUE(test::bitwise_equal(dx_fused, dx));
        EXPECT_TRUE(test::bitwise_equal(gw_fused, gw));
        EXPECT_TRUE(test::bitwise_equal(gb_fused, gb));
        // Without dx (the first layer's input), the parameters' gradients alone.
        layer.backward_relu(x, dy, none, cap, back);
        for (int64_t k = 0; k < c; ++k) EXPECT_EQ(gw_fused[k], 2 * gw[k]) << k;
      }
}

}  // namespace
}  // namespace zotrain
