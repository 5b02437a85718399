// The integer ZO step's update (int8_step.h) against the rule applied to whole tensors: with
// accumulators smaller than a weight, the chunked sums (range first, then the move) give what
// summing the whole tensor at once gives; with one sample, the one-pass move gives it too; a
// partial move (zo_move) moves the given fraction of the perturbed weights and no other; a clean
// head pass (head_grad clean) gives the head the BP step's update.
#include "train/int8_step.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kernels/int8.h"
#include "zo/ternary.h"
#include "zotrain/core/arena.h"
#include "zotrain/core/rng.h"
#include "zotrain/models/model.h"

namespace zotrain {
namespace {

// One Full ZO step of LeNet-5 at batch 1 with q samples, moving `fraction` of the perturbed
// weights, checked weight by weight.
void check_zo_update(int q, int zo_bits, double fraction = 1.0) {
  const ModelSpec m = lenet5(Shape{1, 28, 28}, 10);
  const Network desc(m.item_shape, m.layers);
  QNetwork net(desc);
  Arena arena;
  net.allocate(arena, 1, desc.num_layers(), 5, nullptr);  // Full ZO at batch 1
  int64_t largest = 0;
  for (const QWeight& w : net.weights()) largest = std::max(largest, w.value.numel());
  ASSERT_LT(net.accumulator_elems(), largest) << "the test needs a weight summed in chunks";

  Rng rng(3, 0);
  for (int64_t i = 0; i < net.input().numel(); ++i)
    net.input().data[i] = static_cast<int8_t>(static_cast<int>(rng.below(255)) - 127);
  net.input().exp = -7;
  const uint8_t label = 4;
  std::vector<std::vector<int8_t>> before;
  for (const QWeight& w : net.weights())
    before.emplace_back(w.value.data, w.value.data + w.value.numel());

  int8::StepConfig cfg;
  cfg.seed = 7, cfg.step = 3, cfg.q = q, cfg.eps = 7, cfg.zo_bits = zo_bits;
  cfg.zero_threshold = zo::zero_threshold(0.3);
  cfg.move_threshold = zo::move_threshold(cfg.zero_threshold, fraction);
  cfg.loss_frac_bits = 8;  // fine enough that the samples do not tie
  int8::StepBuffers buffers;
  cfg.buffers = &buffers;
  net.set_mode({true, 0, false});
  int8::zo_step(net, 1, &label, cfg);

  const zo::Samples<int>& samples = buffers.samples;
  ASSERT_EQ(samples.seeds.size(), static_cast<size_t>(q));
  // q > 1: more than one sample with a sign, so that the sums (not the one-pass move) run.
  const auto signed_samples =
      std::count_if(samples.g.begin(), samples.g.end(), [](int g) { return g != 0; });
  ASSERT_EQ(signed_samples, q) << "the case needs every sample's losses apart";
  int moved = 0;
  int64_t perturbed = 0, in_move = 0;  // z nonzero in the passes, in the move
  for (size_t k = 0; k < net.weights().size(); ++k) {
    const QWeight& w = net.weights()[k];
    const int64_t n = w.value.numel();
    std::vector<int32_t> acc(static_cast<size_t>(n), 0);
    for (size_t s = 0; s < samples.seeds.size(); ++s)
      for (int64_t i = 0; i < n; ++i) {
        const auto e = static_cast<uint64_t>(i);
        const int z = zo::ternary(samples.seeds[s], w.tensor, cfg.zero_threshold, e);
        const int z_moved = zo::ternary(samples.seeds[s], w.tensor, cfg.move_threshold, e);
        ASSERT_TRUE(z_moved == 0 || z_moved == z) << "a moved weight outside the perturbation";
        perturbed += z != 0, in_move += z_moved != 0;
        acc[i] += samples.g[s] * z_moved;
      }
    const int shift = std::max(kernels::range_bits(acc.data(), n) - cfg.zo_bits, 0);
    for (int64_t i = 0; i < n; ++i) {
      const int8_t want = kernels::clip_s8(before[k][i] - kernels::psto_shift(acc[i], shift));
      ASSERT_EQ(w.value.data[i], want) << "weight of layer " << w.layer << ", element " << i;
      moved += want != before[k][i];
    }
  }
  EXPECT_GT(moved, 1000 * fraction);  // the step moved the body (not a vacuous comparison)
  // The moved share of the perturbed weights: binomial, n > 30,000 here, so within 0.02.
  EXPECT_NEAR(static_cast<double>(in_move) / static_cast<double>(perturbed), fraction, 0.02);
}

TEST(Int8Step, ZoUpdateInChunksEqualsTheRuleOnWholeTensors) {
  check_zo_update(3, 2);
}

TEST(Int8Step, OneSampleUpdateInOnePassEqualsTheRule) {
  check_zo_update(1, 1);
}

TEST(Int8Step, PartialMoveMovesAFractionOfThePerturbedWeights) {
  check_zo_update(1, 1, 0.25);
  check_zo_update(3, 2, 0.5);
  EXPECT_EQ(zo::move_threshold(zo::zero_threshold(0.9), 1.0), zo::zero_threshold(0.9));
  EXPECT_EQ(zo::move_threshold(0, 0.5), 1u << 23);
}

// An ElasticZO step whose head learns from a clean pass moves the head exactly as the BP step
// of the same weights and batch does (the body, which moves after the passes, cannot reach the
// head's update); from the perturbed passes it does not.
TEST(Int8Step, CleanHeadPassGivesTheHeadTheBpUpdate) {
  const ModelSpec m = lenet5(Shape{1, 28, 28}, 10);
  const Network desc(m.item_shape, m.layers);
  const int head = desc.num_layers() - 2, rows = 4;
  std::vector<std::vector<int8_t>> head_after[3];  // BP step, clean head, perturbed head
  for (int run = 0; run < 3; ++run) {
    QNetwork net(desc);
    Arena arena;
    net.allocate(arena, rows, head, 5, nullptr);
    Rng rng(3, 0);
    for (int64_t i = 0; i < net.input().numel(); ++i)
      net.input().data[i] = static_cast<int8_t>(static_cast<int>(rng.below(255)) - 127);
    net.input().exp = -7;
    const uint8_t labels[rows] = {4, 1, 7, 0};
    int8::StepConfig cfg;
    cfg.seed = 7, cfg.step = 3, cfg.eps = 15, cfg.loss_frac_bits = 8;
    cfg.zero_threshold = zo::zero_threshold(0.33);
    cfg.clean_head = run == 1;
    net.set_mode({true, 0, false});
    if (run == 0)
      int8::bp_step(net, rows, labels, cfg);
    else
      int8::zo_step(net, rows, labels, cfg);
    for (const QWeight& w : net.weights())
      if (w.layer >= head)
        head_after[run].emplace_back(w.value.data, w.value.data + w.value.numel());
  }
  EXPECT_EQ(head_after[1], head_after[0]);
  EXPECT_NE(head_after[2], head_after[0]);  // the perturbed passes' gradient differs
}

}  // namespace
}  // namespace zotrain
