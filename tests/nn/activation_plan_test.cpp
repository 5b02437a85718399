#include "nn/activation_plan.h"

#include <gtest/gtest.h>

#include "zotrain/core/tensor.h"

namespace zotrain {
namespace {

// A chain of layers, each with its own output of `bytes`, none in place or fused.
ActivationRequest chain(std::vector<int64_t> bytes, int head) {
  ActivationRequest r;
  for (size_t i = 0; i < bytes.size(); ++i)
    r.layers.push_back({bytes[i], false, false, static_cast<int>(i)});
  r.to = static_cast<int>(bytes.size());
  r.head = head;
  return r;
}

bool share(size_t a, size_t a_bytes, size_t b, size_t b_bytes) {
  return a < b + align_up(b_bytes) && b < a + align_up(a_bytes);
}

TEST(ActivationPlan, ForwardOnlyPassesAlternateTwoBuffers) {
  const ActivationPlan p = plan_activations(chain({1000, 300, 900, 200, 100}, 5));
  EXPECT_FALSE(p.holds_backprop);
  // Outputs two layers apart share bytes; neighbours (read and written by one layer) do not.
  EXPECT_EQ(p.output[0], p.output[2]);
  EXPECT_FALSE(share(p.output[0], 1000, p.output[1], 300));
  EXPECT_FALSE(share(p.output[2], 900, p.output[3], 200));
  EXPECT_EQ(p.bytes, align_up(1000) + align_up(300));
  EXPECT_EQ(p.backward[0], ActivationPlan::kNone);
  EXPECT_EQ(p.logits_grad, ActivationPlan::kNone);
}

TEST(ActivationPlan, HeadOutputsLiveToTheEndAndMayReuseTheBodysBytes) {
  ActivationRequest r = chain({1000, 300, 64, 64, 64}, 3);
  r.backward_bytes = 64, r.backward_buffers = 1, r.logits_grad_bytes = 64;
  const ActivationPlan p = plan_activations(r);
  EXPECT_TRUE(p.holds_backprop);
  // Kept: the head's input (layer 2's output) and every head output, all apart, and apart from
  // the backward buffers; layer 0's output is dead before the head writes, so they reuse it.
  const std::vector<size_t> kept = {p.output[2], p.output[3], p.output[4], p.backward[0],
                                    p.logits_grad};
  for (size_t a = 0; a < kept.size(); ++a)
    for (size_t b = a + 1; b < kept.size(); ++b) EXPECT_FALSE(share(kept[a], 64, kept[b], 64));
  for (size_t k : kept) EXPECT_TRUE(share(p.output[0], 1000, k, 64)) << k;
  EXPECT_EQ(p.bytes, align_up(1000) + align_up(300));
}

TEST(ActivationPlan, InPlaceLayersWriteOverTheirInputWhereNothingReadsIt) {
  // 0 conv, 1 relu, 2 linear, 3 relu, 4 linear; head from 3.
  ActivationRequest r = chain({800, 800, 128, 128, 64}, 3);
  r.layers[1].in_place = r.layers[3].in_place = true;
  r.layers[2].backward_needs_output = true;
  EXPECT_EQ(plan_activations(r).output[1], plan_activations(r).output[0]);
  // In the head, not over an output the layer before reads in backward (layer 2 is in the
  // head from 2 on).
  r.head = 2;
  const ActivationPlan p = plan_activations(r);
  EXPECT_NE(p.output[3], p.output[2]);
  r.layers[2].backward_needs_output = false;
  EXPECT_EQ(plan_activations(r).output[3], plan_activations(r).output[2]);
  // Never over the frozen layers' output, which every pass starts from.
  r.frozen = 1, r.head = 3;
  const ActivationPlan f = plan_activations(r);
  EXPECT_NE(f.output[1], f.output[0]);
  EXPECT_FALSE(share(f.output[0], 800, f.output[1], 800));
}

TEST(ActivationPlan, AFusedGroupWritesOnlyItsLastOutput) {
  // conv, relu, pool as one group, then linear.
  ActivationRequest r = chain({4000, 4000, 1000, 100}, 4);
  r.layers[0].group_last = 2;
  const ActivationPlan p = plan_activations(r);
  EXPECT_EQ(p.output[0], ActivationPlan::kNone);
  EXPECT_EQ(p.output[1], ActivationPlan::kNone);
  EXPECT_EQ(p.bytes, align_up(1000) + align_up(100));
  EXPECT_EQ(p.buffers, 2);
}

TEST(ActivationPlan, PassesFromALaterLayerKeepTheirLastOutput) {
  // A perturbation lane's trained body: layers [1, 4) of a network whose head starts at 4.
  ActivationRequest r = chain({500, 200, 200, 200, 10}, 4);
  r.from = 1, r.to = 4;
  const ActivationPlan p = plan_activations(r);
  EXPECT_EQ(p.output[0], ActivationPlan::kNone);
  EXPECT_EQ(p.output[4], ActivationPlan::kNone);
  EXPECT_EQ(p.output[1], p.output[3]) << "layer 1's output is dead when layer 3 writes";
  EXPECT_EQ(p.bytes, 2 * align_up(200));
}

}  // namespace
}  // namespace zotrain
