// Where a step's activations live, for every precision (Network's f32, QNetwork's int8): the
// output of each layer, the backward pass's two gradient buffers and the logits' gradient,
// placed in one block by MemoryPlanner from their lifetimes in a step. Ping-pong buffers, kept
// activations and in-place layers are not encoded here; they fall out of the lifetimes:
// - a body output lives from the pass that writes it to the pass that reads it, so two body
//   outputs two layers apart may share bytes, and so may a body output and a later head output;
// - the head's input and every head output live to the end of the step (backward reads them);
//   so do the frozen layers' output (every pass starts from it) and the last output run;
// - an in-place layer writes over its input's buffer, which then lives as long as either value
//   is read; in the head only when the layer before does not read its own output in backward,
//   and never over the frozen layers' output or a value outside the block;
// - the backward buffers live from the loss to the end of the step.
// A step's time runs over the forward groups (a fused group is one time), the loss, then
// backward; every pass of a step follows that order, so one plan serves them all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace zotrain {

struct ActivationLayer {
  int64_t bytes = 0;  // its output at the batch
  bool in_place = false;
  bool backward_needs_output = false;
  // The last layer of the forward group that starts here (itself when it runs alone); the
  // layers inside a group after its first write no output.
  int group_last = 0;
};

struct ActivationRequest {
  std::vector<ActivationLayer> layers;
  int from = 0;    // the first layer the passes run; its input is not in the block
  int to = 0;      // one past the last
  int head = 0;    // layers [head, to) also run backward (head = to: none)
  int frozen = 0;  // the output of layer frozen - 1 is kept for later passes (0: no such layer)
  int64_t backward_bytes = 0;     // each of the backward buffers
  int backward_buffers = 0;       // 0 to 2
  int64_t logits_grad_bytes = 0;  // 0: none
};

struct ActivationPlan {
  static constexpr size_t kNone = std::numeric_limits<size_t>::max();
  std::vector<size_t> output;  // per layer: the offset of its output in the block, or kNone
  size_t backward[2] = {kNone, kNone};
  int64_t backward_bytes = 0;  // each (the request's)
  size_t logits_grad = kNone;
  size_t bytes = 0;             // of the block
  int buffers = 0;              // placed, in-place layers not counted
  bool holds_backprop = false;  // whether a value is kept for backward
};

ActivationPlan plan_activations(const ActivationRequest& r);

}  // namespace zotrain
