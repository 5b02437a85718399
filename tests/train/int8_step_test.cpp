// The integer ZO step's update (int8_step.h) against the rule applied to whole tensors: with
// accumulators smaller than a weight, the chunked sums (range first, then the move) give what
// summing the whole tensor at once gives; with one sample, the one-pass move gives it too.
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

// One Full ZO step of LeNet-5 at batch 1 with q samples, checked weight by weight.
void check_zo_update(int q, int zo_bits) {
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
  for (size_t k = 0; k < net.weights().size(); ++k) {
    const QWeight& w = net.weights()[k];
    const int64_t n = w.value.numel();
    std::vector<int32_t> acc(static_cast<size_t>(n), 0);
    for (size_t s = 0; s < samples.seeds.size(); ++s)
      for (int64_t i = 0; i < n; ++i)
        acc[i] += samples.g[s] * zo::ternary(samples.seeds[s], w.tensor, cfg.zero_threshold,
                                             static_cast<uint64_t>(i));
    const int shift = std::max(kernels::range_bits(acc.data(), n) - cfg.zo_bits, 0);
    for (int64_t i = 0; i < n; ++i) {
      const int8_t want = kernels::clip_s8(before[k][i] - kernels::psto_shift(acc[i], shift));
      ASSERT_EQ(w.value.data[i], want) << "weight of layer " << w.layer << ", element " << i;
      moved += want != before[k][i];
    }
  }
  EXPECT_GT(moved, 1000);  // the step moved the body (not a vacuous comparison)
}

TEST(Int8Step, ZoUpdateInChunksEqualsTheRuleOnWholeTensors) {
  check_zo_update(3, 2);
}

TEST(Int8Step, OneSampleUpdateInOnePassEqualsTheRule) {
  check_zo_update(1, 1);
}

}  // namespace
}  // namespace zotrain
