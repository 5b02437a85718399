#include "nn/activation_plan.h"

#include "core/memory_planner.h"
#include "zotrain/core/error.h"

namespace zotrain {

ActivationPlan plan_activations(const ActivationRequest& r) {
  const int L = static_cast<int>(r.layers.size());
  ZT_ASSERT(0 <= r.from && r.from < r.to && r.to <= L && r.from <= r.head && r.head <= r.to);
  ZT_ASSERT(r.frozen <= r.head && r.backward_buffers >= 0 && r.backward_buffers <= 2);
  // Times: each forward group at its first layer, the loss at `to`, backward after it.
  const int end = 2 * r.to + 1;
  const bool backprop = r.head < r.to;
  auto kept = [&](int i) {
    return i == r.to - 1 || i == r.frozen - 1 || (backprop && i >= r.head - 1);
  };
  MemoryPlanner planner;
  std::vector<int> in(L, -1);  // the buffer holding layer i's output; -1: none
  int prev = -1;               // the buffer of the current group's input; -1: outside the block
  for (int i = r.from; i < r.to;) {
    const ActivationLayer& layer = r.layers[i];
    const int j = layer.group_last;
    ZT_ASSERT(j >= i && j < r.to);
    if (prev >= 0) planner.extend(prev, i);
    const bool over_input = j == i && layer.in_place && prev >= 0 && i - 1 != r.frozen - 1 &&
                            (i - 1 < r.head || !r.layers[i - 1].backward_needs_output);
    if (!over_input) prev = planner.add(static_cast<size_t>(r.layers[j].bytes), i, i);
    in[j] = prev;
    if (kept(j)) planner.extend(prev, end);
    i = j + 1;
  }
  int backward[2] = {-1, -1}, logits_grad = -1;
  for (int k = 0; k < r.backward_buffers; ++k)
    backward[k] = planner.add(static_cast<size_t>(r.backward_bytes), r.to + 1, end);
  if (r.logits_grad_bytes > 0)
    logits_grad = planner.add(static_cast<size_t>(r.logits_grad_bytes), r.to, end);
  planner.plan();
  ActivationPlan plan;
  plan.output.assign(L, ActivationPlan::kNone);
  for (int i = 0; i < L; ++i)
    if (in[i] >= 0) plan.output[i] = planner.offset(in[i]);
  for (int k = 0; k < r.backward_buffers; ++k) plan.backward[k] = planner.offset(backward[k]);
  plan.backward_bytes = r.backward_bytes;
  if (logits_grad >= 0) plan.logits_grad = planner.offset(logits_grad);
  plan.bytes = planner.total();
  plan.buffers = planner.count();
  plan.holds_backprop = backprop;
  return plan;
}

}  // namespace zotrain
