#include "nn/residual.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernels/activation.h"
#include "nn/batch_norm.h"
#include "nn/conv2d.h"
#include "nn/gradient_check.h"
#include "zotrain/core/error.h"

namespace zotrain {
namespace {

using L = LayerSpec;

ref::Vec relu(ref::Vec v, double cap = 1e300) {
  for (double& e : v) e = std::min(std::max(e, 0.0), cap);
  return v;
}

ref::Vec add(ref::Vec a, const ref::Vec& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

ref::Vec bn(const ref::ConvShape& s, const ref::Vec& x, const ref::Vec& gamma,
            const ref::Vec& beta) {
  return ref::batch_norm(Shape{s.n, s.out_c, s.out_h(), s.out_w()}, x, gamma, beta,
                         BatchNorm::kEps);
}

// Steps of 1e-5 keep the finite differences off the ReLUs' kinks.
const test::GradCheckOptions kOptions{1e-5, 1e-4, 1e-3};

// ResNet's basic block with the identity shortcut: relu(conv(relu(bn(conv(x)))) + x); the first
// convolution has a bias, the second none.
TEST(GradCheck, ResidualBasicBlockWithIdentity) {
  const Shape in{3, 2, 5, 5};
  Residual block(L::residual({L::conv2d(2, 3, 1, 1), L::batch_norm(), L::relu(),
                              L::conv2d(2, 3, 1, 1, 1, false)},
                             {}, true),
                 in);
  const ref::ConvShape conv{3, 2, 5, 5, 2, 3, 1, 1};
  test::check_gradients(
      block, test::random_uniform(in, 70, 0),
      [&](const ref::Vec& x, const std::vector<ref::Vec>& p) {
        ref::Vec h = relu(bn(conv, ref::conv2d(conv, x, p[0], p[1]), p[2], p[3]));
        return relu(add(ref::conv2d(conv, h, p[4], {}), x));
      },
      70, kOptions);
}

// The downsampling basic block: stride 2 and more channels, a 1x1 stride-2 convolution with batch
// norm on the shortcut.
TEST(GradCheck, ResidualBasicBlockWithProjection) {
  const Shape in{3, 2, 6, 5};
  Residual block(L::residual({L::conv2d(4, 3, 2, 1, 1, false), L::batch_norm(), L::relu(),
                              L::conv2d(4, 3, 1, 1, 1, false), L::batch_norm()},
                             {L::conv2d(4, 1, 2, 0, 1, false), L::batch_norm()}, true),
                 in);
  const ref::ConvShape first{3, 2, 6, 5, 4, 3, 2, 1}, second{3, 4, 3, 3, 4, 3, 1, 1},
      project{3, 2, 6, 5, 4, 1, 2, 0};
  test::check_gradients(
      block, test::random_uniform(in, 71, 0),
      [&](const ref::Vec& x, const std::vector<ref::Vec>& p) {
        ref::Vec h = relu(bn(first, ref::conv2d(first, x, p[0], {}), p[1], p[2]));
        ref::Vec main = bn(second, ref::conv2d(second, h, p[3], {}), p[4], p[5]);
        return relu(add(main, bn(project, ref::conv2d(project, x, p[6], {}), p[7], p[8])));
      },
      71, kOptions);
}

// MobileNetV2's inverted residual: 1x1 expansion, 3x3 depthwise, ReLU6, linear bottleneck, no
// activation after the sum.
const LayerSpec kInverted = L::residual(
    {L::conv2d(8, 1, 1, 0, 1, false), L::batch_norm(), L::relu6(), L::conv2d(8, 3, 1, 1, 8, false),
     L::batch_norm(), L::relu6(), L::conv2d(4, 1, 1, 0, 1, false), L::batch_norm()},
    {}, false);

TEST(GradCheck, ResidualInvertedBottleneck) {
  const Shape in{2, 4, 4, 3};
  Residual block(kInverted, in);
  const ref::ConvShape expand{2, 4, 4, 3, 8, 1, 1, 0}, depthwise{2, 8, 4, 3, 8, 3, 1, 1, 8},
      project{2, 8, 4, 3, 4, 1, 1, 0};
  test::check_gradients(
      block, test::random_uniform(in, 72, 0, -2.0f, 2.0f),
      [&](const ref::Vec& x, const std::vector<ref::Vec>& p) {
        ref::Vec h = relu(bn(expand, ref::conv2d(expand, x, p[0], {}), p[1], p[2]), 6);
        h = relu(bn(depthwise, ref::conv2d(depthwise, h, p[3], {}), p[4], p[5]), 6);
        return add(bn(project, ref::conv2d(project, h, p[6], {}), p[7], p[8]), x);
      },
      72, kOptions);
}

TEST(LayerResidual, SameForAnyThreadCountAndReadsContextParams) {
  const Shape in{3, 4, 5, 4};
  Residual block(L::residual({L::conv2d(6, 3, 2, 1), L::batch_norm(), L::relu()},
                             {L::conv2d(6, 1, 2), L::batch_norm()}, true),
                 in);
  test::expect_same_for_any_thread_count(block, in, 73);
  test::expect_forward_uses_context_params(block, in, 74);
  Residual inverted(kInverted, in);
  test::expect_same_for_any_thread_count(inverted, in, 75);
  test::expect_forward_uses_context_params(inverted, in, 76);
}

// Forward runs each batch norm and the ReLU after it as one pass, into the ReLU's buffer (in the
// inverted block the input's: batch norm in place); the output is the children's run one by one,
// bit for bit. Basic block with a projection and a post ReLU, and the inverted block.
TEST(LayerResidual, FusedBatchNormAndReluGiveTheChildrensOutput) {
  const LayerSpec basic = L::residual({L::conv2d(6, 3, 2, 1), L::batch_norm(), L::relu()},
                                      {L::conv2d(6, 1, 2), L::batch_norm()}, true);
  const Shape in{3, 4, 5, 4};
  uint64_t seed = 80;
  for (const LayerSpec* spec : {&basic, &kInverted}) {
    Residual block(*spec, in);
    std::vector<Tensor> params = test::bind_random_params(block, seed, 0.0f);
    // Batch norm's gamma in ±8: outputs past ReLU6's cap.
    const std::vector<ParamSpec> names = block.param_specs();
    for (size_t i = 0; i < params.size(); ++i) {
      const bool main = names[i].name.rfind("main.", 0) == 0;
      const std::string rest = names[i].name.substr(main ? 5 : 9);  // "<child>.<name>"
      const LayerSpec& child = (main ? spec->main : spec->shortcut)[std::stoul(rest)];
      if (child.op == Op::kBatchNorm && rest.find("weight") != std::string::npos)
        for (int64_t k = 0; k < params[i].numel(); ++k) params[i][k] *= 8.0f;
    }
    const Tensor x = test::random_uniform(in, seed++, 0);
    test::TestContext tc(block, in, nullptr);
    Tensor y = test::nan_tensor(block.output_shape(in));
    block.forward(x, y, tc.ctx);
    size_t next = 0;  // the block's parameters are its children's, in order
    auto chain = [&](const std::vector<LayerSpec>& specs) {
      Tensor h = x;
      for (const LayerSpec& child_spec : specs) {
        std::unique_ptr<Layer> child = make_layer(child_spec, h.shape());
        const size_t count = child->param_specs().size();
        child->bind({params.begin() + next, params.begin() + next + count}, {});
        next += count;
        test::TestContext child_tc(*child, h.shape(), nullptr);
        Tensor out = test::nan_tensor(child->output_shape(h.shape()));
        child->forward(h, out, child_tc.ctx);
        h = out;
      }
      return h;
    };
    Tensor want = chain(spec->main);
    const Tensor shortcut = spec->shortcut.empty() ? x : chain(spec->shortcut);
    for (int64_t k = 0; k < want.numel(); ++k) want[k] += shortcut[k];
    if (spec->post_relu) kernels::relu_forward(want.numel(), want.data(), want.data());
    EXPECT_TRUE(test::bitwise_equal(y, want)) << block.describe();
  }
}

// A head block keeps its batch norms' statistics from forward (ExecContext::stats): the
// children's backward read them, with the results of computing them. And its children's outputs
// (ExecContext::kept), which backward reads: another value there changes the gradients, unless
// backward recomputes them (ExecContext::recompute_kept).
TEST(LayerResidual, KeptStatisticsGiveTheResultsOfComputedOnes) {
  const Shape in{3, 4, 5, 4};
  Residual block(kInverted, in);
  ASSERT_EQ(block.kept_stats_doubles(in), 3u * (8 + 8 + 4));
  test::bind_random_params(block, 81, 0.0f);
  const Tensor x = test::random_uniform(in, 81, 0);
  const Tensor dy = test::random_uniform(block.output_shape(in), 81, 1);
  const test::Pass want = test::run_pass(block, x, dy, nullptr);
  std::vector<double> stats(block.kept_stats_doubles(in), std::nan(""));
  std::vector<Tensor> grads;
  for (const Tensor& p : block.params()) grads.push_back(Tensor::zeros(p.shape()));
  block.bind(block.params(), grads);
  test::TestContext tc(block, in, nullptr);
  tc.ctx.stats = stats.data();
  Tensor y = test::nan_tensor(block.output_shape(in)), dx = test::nan_tensor(in);
  block.forward(x, y, tc.ctx);
  tc.ctx.stats_kept = true;
  block.backward(x, y, dy, dx, tc.ctx);
  EXPECT_TRUE(test::bitwise_equal(y, want.y));
  EXPECT_TRUE(test::bitwise_equal(dx, want.dx));
  for (size_t i = 0; i < grads.size(); ++i)
    EXPECT_TRUE(test::bitwise_equal(grads[i], want.grads[i])) << i;
  tc.kept[tc.kept_size / 2] += 1.0f;
  Tensor dx_changed = test::nan_tensor(in);
  block.backward(x, y, dy, dx_changed, tc.ctx);
  EXPECT_FALSE(test::bitwise_equal(dx_changed, want.dx));
  // With recompute_kept (a buffer the head's blocks share) backward writes them again first.
  std::fill(tc.kept.begin(), tc.kept.begin() + static_cast<int64_t>(tc.kept_size), 7.0f);
  tc.ctx.recompute_kept = true;
  Tensor dx_again = test::nan_tensor(in);
  block.backward(x, y, dy, dx_again, tc.ctx);
  EXPECT_TRUE(test::bitwise_equal(dx_again, want.dx));
}

TEST(LayerResidual, NamesDescribesAndSizesItsChildren) {
  const Shape in{2, 3, 8, 8};
  Residual block(L::residual({L::conv2d(4, 3, 2, 1, 1, false), L::batch_norm(), L::relu()},
                             {L::conv2d(4, 1, 2, 0, 1, false), L::batch_norm()}, true),
                 in);
  EXPECT_EQ(block.describe(),
            "residual [conv2d 3->4 k3 s2 p1 nobias, batch_norm 4, relu] + [conv2d 3->4 k1 s2 p0 "
            "nobias, batch_norm 4], relu");
  EXPECT_EQ(block.output_shape(in), (Shape{2, 4, 4, 4}));
  std::vector<std::string> names, state;
  for (const ParamSpec& p : block.param_specs()) names.push_back(p.name);
  for (const ParamSpec& s : block.state_specs()) state.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"main.0.weight", "main.1.weight", "main.1.bias",
                                             "shortcut.0.weight", "shortcut.1.weight",
                                             "shortcut.1.bias"}));
  EXPECT_EQ(state, (std::vector<std::string>{"main.1.running_mean", "main.1.running_var",
                                             "shortcut.1.running_mean", "shortcut.1.running_var"}));
  EXPECT_EQ(block.forward_macs(in),
            2 * 4 * 16 * 27 + 2 * (2 * 4 * 16) + 2 * 4 * 16 * 3 + 2 * (2 * 4 * 16));
  // Forward: two buffers of main's first output (the shortcut's are as large); backward: the
  // ReLU's gradient and two buffers as large as the input. A training forward keeps the outputs
  // but main's batch norm's (fused with the ReLU after it, whose backward reads neither).
  const size_t out = 2 * 4 * 16, input = 2 * 3 * 64;
  const size_t children = std::max(Conv2d(3, 4, 3, 2, 1).workspace_floats(in, 1),
                                   Conv2d(3, 4, 1, 2, 0).workspace_floats(in, 1));
  const size_t work = (children + 15) / 16 * 16;
  EXPECT_EQ(block.forward_workspace_floats(in, 1), work + 2 * out);
  EXPECT_EQ(block.workspace_floats(in, 1), work + out + 2 * input);
  EXPECT_EQ(block.kept_floats(in), 4 * out);
  EXPECT_EQ(Residual(kInverted, Shape{1, 4, 3, 3}).describe().substr(0, 10), "residual [");
  EXPECT_NE(Residual(kInverted, Shape{1, 4, 3, 3}).describe().find("] + identity"),
            std::string::npos);
}

TEST(LayerResidual, RejectsAnEmptyMainAndMismatchedShapes) {
  EXPECT_THROW(Residual(L::residual({}, {}, true), Shape{1, 2, 4, 4}), InputError);
  EXPECT_THROW(Residual(L::residual({L::conv2d(3, 1)}, {}, true), Shape{1, 2, 4, 4}), InputError);
  EXPECT_THROW(make_layer(L::residual({L::conv2d(2, 3, 2, 1)}, {}, true), Shape{1, 2, 4, 4}),
               InputError);
  EXPECT_NO_THROW(make_layer(L::residual({L::conv2d(2, 3, 1, 1)}, {}, true), Shape{1, 2, 4, 4}));
}

// relu(bn(conv(x)) + x) with the running statistics bound: training passes move them only when
// asked, evaluation normalizes by them.
TEST(LayerResidual, BatchNormStatisticsOfTheChildren) {
  const Shape in{4, 2, 3, 3};
  Residual block(L::residual({L::conv2d(2, 1), L::batch_norm()}, {}, true), in);
  std::vector<Tensor> params = test::bind_random_params(block, 77, 0.0f);
  Tensor mean = Tensor::zeros(Shape{2}), var = Tensor::zeros(Shape{2});
  mean.fill(0.5f), var.fill(2.0f);
  block.bind_state({mean, var});
  Tensor x = test::random_uniform(in, 77, 0);
  test::TestContext tc(block, in, nullptr);
  Tensor y = test::nan_tensor(in), dx = test::nan_tensor(in);
  block.forward(x, y, tc.ctx);
  block.backward(x, y, y, dx, tc.ctx);
  EXPECT_EQ(mean[0], 0.5f);
  EXPECT_EQ(var[1], 2.0f);
  tc.ctx.update_stats = true;
  block.forward(x, y, tc.ctx);
  const float moved = mean[0];
  EXPECT_NE(moved, 0.5f);
  EXPECT_NE(var[1], 2.0f);
  block.backward(x, y, y, dx, tc.ctx);
  EXPECT_EQ(mean[0], moved);

  tc.ctx.training = false;
  block.forward(x, y, tc.ctx);
  const ref::ConvShape conv{4, 2, 3, 3, 2, 1, 1, 0};
  ref::Vec h = ref::conv2d(conv, ref::to_vec(x), ref::to_vec(params[0]), ref::to_vec(params[1]));
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t b = 0; b < 4; ++b)
      for (int64_t i = 0; i < 9; ++i) {
        double& v = h[(b * 2 + c) * 9 + i];
        v = params[2][c] * (v - mean[c]) / std::sqrt(var[c] + BatchNorm::kEps) + params[3][c];
      }
  EXPECT_TRUE(test::all_close("y", y.data(), relu(add(h, ref::to_vec(x))), 1e-5));
  EXPECT_EQ(mean[0], moved);
}

}  // namespace
}  // namespace zotrain
