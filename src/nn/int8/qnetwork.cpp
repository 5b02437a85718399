#include "zotrain/nn/int8/qnetwork.h"

#include <algorithm>

#include "kernels/int8.h"
#include "nn/activation_plan.h"
#include "zotrain/core/error.h"

namespace zotrain {

QNetwork::QNetwork(const Network& desc) : desc_(desc) {
  // The layer specs are not kept by Network; rebuild each integer layer from the f32 layer's
  // description through its spec.
  for (int i = 0; i < desc.num_layers(); ++i)
    layers_.push_back(make_qlayer(desc.spec(i), desc.input_shape(i, 1)));
}

MemoryPlan QNetwork::plan(int64_t batch, int head_start, int threads) const {
  return const_cast<QNetwork*>(this)->layout(batch, head_start, threads, nullptr);
}

void QNetwork::allocate(Arena& arena, int64_t batch, int head_start, uint64_t seed,
                        ThreadPool* pool) {
  layout(batch, head_start, pool ? pool->size() : 1, &arena);
  pool_ = pool;
  init_weights(seed);
}

// The fusion pass (nn/graph.h) with what the integer layers run fused: a max pooling inside
// the layer before it, in the body only. The layers before the pooling write no output.
Graph QNetwork::fusions(int h) const {
  FusionRules rules;
  rules.max_pooled = [&](int i, int j) {
    return layers_[i]->max_pooled_acc_elems(desc_.input_shape(i, 1), desc_.pool_windows(j)) > 0;
  };
  rules.end = h;
  return fuse(desc_.graph(), rules);
}

// The activations, as Network's (activation_plan.h), in bytes of int8.
ActivationPlan QNetwork::activations(int64_t batch, int h, const Graph& g) const {
  const int L = num_layers();
  auto numel = [&](int i) { return desc_.input_shape(i, batch).numel(); };
  ActivationRequest r;
  r.to = L, r.head = h;
  for (int i = 0; i < L; ++i)
    r.layers.push_back(
        {numel(i + 1), layers_[i]->in_place(), layers_[i]->backward_needs_output(), g.last_of(i)});
  if (h < L) {
    // dx of the head's layers after the first that do not run in place (those write over dy).
    for (int i = h + 1; i < L; ++i)
      if (!layers_[i]->in_place()) r.backward_bytes = std::max(r.backward_bytes, numel(i));
    r.backward_buffers = r.backward_bytes > 0 ? std::min(L - 1 - h, 2) : 0;
    r.logits_grad_bytes = numel(L);
  }
  return plan_activations(r);
}

// Elements of the largest int32 accumulators (of a layer output or input, of a head layer's weight
// gradient, and of the zeroth-order update: a body weight's samples are summed there, in chunks
// of at most kUpdateChunk elements when the layers need fewer) and int16 staging, bytes of kernel
// scratch per worker (of forward alone in the body), and the largest body weight (its perturbed
// copy).
QNetwork::Workspace QNetwork::workspace(int64_t batch, int h, const Graph& g) const {
  Workspace w;
  for (int i = 0; i < num_layers(); ++i) {
    const Shape in = desc_.input_shape(i, batch);
    const bool pooled = g.kind_at(i) == GraphNode::kMaxPooled;
    const QLayer& l = *layers_[i];
    const int64_t weight = l.weight_shape().numel();
    w.acc = std::max(
        {w.acc,
         pooled ? l.max_pooled_acc_elems(in, desc_.pool_windows(g.last_of(i))) : l.acc_elems(in),
         i >= h ? l.grad_acc_elems() : std::min(weight, kUpdateChunk)});
    w.stage =
        std::max(w.stage, pooled ? l.max_pooled_stage_elems(in, desc_.pool_windows(g.last_of(i)))
                                 : l.stage_elems(in));
    w.work = std::max(w.work, i < h ? l.forward_work_bytes(in) : l.work_bytes(in));
    if (i < h) w.scratch = std::max(w.scratch, weight);
  }
  // One slice of accumulators and kernel scratch per worker, 64-byte aligned.
  w.acc = (w.acc + 15) / 16 * 16;
  w.work = (w.work + 63) / 64 * 64;
  return w;
}

MemoryPlan QNetwork::layout(int64_t batch, int h, int threads, Arena* arena) {
  const int L = num_layers();
  ZT_ASSERT(batch > 0 && h >= 0 && h <= L);
  MemoryPlan plan;
  auto take = [&](int layer, const std::string& what, Bucket b, int64_t bytes) -> void* {
    plan.add(layer, what, b, static_cast<size_t>(bytes));
    return arena ? arena->alloc_bytes(b, static_cast<size_t>(std::max<int64_t>(bytes, 1)))
                 : nullptr;
  };
  auto name = [&](int i) { return desc_.layer(i).describe(); };

  std::vector<QWeight> weights;
  uint32_t tensor = 0;
  for (int i = 0; i < L; ++i) {
    const std::vector<ParamSpec> specs = desc_.layer(i).param_specs();
    const Shape ws = layers_[i]->weight_shape();
    // Batch norm's f32 scale and shift have no integer counterpart; their streams stay counted.
    if (ws.rank == 0) {
      tensor += static_cast<uint32_t>(specs.size());
      continue;
    }
    auto* w =
        static_cast<int8_t*>(take(i, name(i) + " weight (int8)", Bucket::kParameters, ws.numel()));
    weights.push_back({i, tensor, QTensor{w, ws, 0}, nullptr});
    tensor += static_cast<uint32_t>(specs.size());
  }
  std::vector<QState> states;
  for (int i = 0; i < L; ++i)
    if (const int64_t n = layers_[i]->state_elems(); n > 0)
      states.push_back({i,
                        static_cast<int32_t*>(take(i, name(i) + " running statistics (int32)",
                                                   Bucket::kParameters, n * 4)),
                        n});
  for (QWeight& w : weights)
    if (w.layer >= h)
      w.grad = static_cast<int64_t*>(take(w.layer, name(w.layer) + " weight gradient (int64)",
                                          Bucket::kGradients, w.value.numel() * 8));
  auto* input = static_cast<int8_t*>(
      take(-1, "input batch (int8)", Bucket::kInput, desc_.input_shape(0, batch).numel()));
  Graph fused = fusions(h);
  const ActivationPlan acts = activations(batch, h, fused);
  auto* block = static_cast<int8_t*>(take(
      -1, "activations (int8, " + std::to_string(acts.buffers) + " buffers placed by lifetime)",
      acts.holds_backprop ? Bucket::kActivations : Bucket::kForward,
      static_cast<int64_t>(acts.bytes)));
  auto at = [&](size_t offset) -> int8_t* {
    return block && offset != ActivationPlan::kNone ? block + offset : nullptr;
  };
  const Workspace ws = workspace(batch, h, fused);
  auto* acc = static_cast<int32_t*>(take(-1, "int32 accumulators", Bucket::kWorkspace,
                                         threads * ws.acc * static_cast<int64_t>(4)));
  auto* stage = static_cast<int16_t*>(
      take(-1, "int16 staging of a layer output", Bucket::kWorkspace, ws.stage * 2));
  auto* ranges =
      static_cast<int32_t*>(take(-1, "range of each row", Bucket::kWorkspace, batch * 4));
  void* work = ws.work > 0 ? take(-1, "int8 kernel scratch", Bucket::kWorkspace, threads * ws.work)
                           : nullptr;
  int8_t* scratch = nullptr;
  if (ws.scratch > 0)
    scratch =
        static_cast<int8_t*>(take(-1, "perturbed weights (int8)", Bucket::kWorkspace, ws.scratch));
  if (!arena) return plan;

  batch_ = batch;
  head_ = h;
  weights_ = weights;
  for (const QWeight& w : weights_) layers_[w.layer]->bind(w.value);
  states_ = states;
  for (const QState& st : states_) {
    layers_[st.layer]->bind_state(st.data);
    layers_[st.layer]->init_state(st.data);
  }
  input_ = QTensor{input, desc_.input_shape(0, batch), 0};
  dlogits_ = QTensor{at(acts.logits_grad), desc_.input_shape(L, batch), 0};
  kept_.assign(L, QTensor());
  for (int i = 0; i < L; ++i)
    kept_[i] = QTensor{at(acts.output[i]), desc_.input_shape(i + 1, batch), 0};
  fused_ = std::move(fused);
  back_ = {at(acts.backward[0]), at(acts.backward[1])};
  acc_ = acc, stage_ = stage, ranges_ = ranges, work_ = work, scratch_ = scratch;
  acc_stride_ = ws.acc;
  acc_elems_ = threads * ws.acc;
  work_stride_ = ws.work;
  return plan;
}

QTensor QNetwork::output_buffer(int i, int64_t rows) {
  ZT_ASSERT(kept_[i].data);
  return QTensor{kept_[i].data, desc_.input_shape(i + 1, rows), 0};
}

QExecContext QNetwork::context(int layer) const {
  QExecContext ctx{acc_, work_, nullptr, stage_, ranges_};
  ctx.pool = pool_;
  ctx.acc_stride = acc_stride_;
  ctx.work_stride = work_stride_;
  ctx.training = mode_.training;
  ctx.update_stats = mode_.training && mode_.update_stats;
  ctx.average_stats = averaging_;
  ctx.key = layer_key(mode_.key, layer);
  ctx.all_ranks_range = all_ranks_range_;
  ctx.fixed_norm = fixed_norm_;
  return ctx;
}

QTensor QNetwork::forward(int64_t rows, const QWeightTransform* body) {
  ZT_ASSERT(rows > 0 && rows <= batch_);
  QTensor x = input_.rows(0, rows);
  size_t w = 0;
  for (int i = 0; i < num_layers(); ++i) {
    QExecContext ctx = context(i);
    const bool has_weight = w < weights_.size() && weights_[w].layer == i;
    if (has_weight && body && i < head_) {
      const QWeight& weight = weights_[w];
      parallel_for(pool_, weight.value.numel(),
                   [&](int64_t b, int64_t e) { (*body)(weight, scratch_, b, e); });
      ctx.weight = scratch_;
    }
    w += has_weight;
    if (const GraphNode& n = fused_.node_at(i); n.kind == GraphNode::kMaxPooled) {
      const int j = n.last;
      QTensor y = output_buffer(j, rows);
      layers_[i]->forward_max_pooled(x, desc_.pool_windows(j), y, ctx);
      if (n.act >= 0) layers_[n.act]->forward(y, y, context(n.act));
      kept_[j].exp = y.exp;
      x = y;
      i = j;
      continue;
    }
    QTensor y = output_buffer(i, rows);
    layers_[i]->forward(x, y, ctx);
    kept_[i].exp = y.exp;
    x = y;
  }
  return x;
}

void QNetwork::backward(const QTensor& dlogits) {
  const int L = num_layers();
  ZT_ASSERT(head_ < L);
  const int64_t rows = dlogits.shape[0];
  QTensor dy = dlogits;
  int w = static_cast<int>(weights_.size()) - 1;
  for (int i = L - 1; i >= head_; --i) {
    const QExecContext ctx = context(i);
    const QTensor x = i == 0 ? input_.rows(0, rows) : kept_[i - 1].rows(0, rows);
    const QTensor y = kept_[i].rows(0, rows);
    QTensor dx{nullptr, desc_.input_shape(i, rows), 0};
    if (i > head_)
      dx.data = layers_[i]->in_place() ? dy.data : (dy.data == back_[0] ? back_[1] : back_[0]);
    int64_t* grad = nullptr;
    if (w >= 0 && weights_[w].layer == i) grad = weights_[w--].grad;
    // The head's first layer without weights (an MLP's flatten) has nothing to compute.
    if (!dx.data && !grad) break;
    layers_[i]->backward(x, y, dy, dx, grad, ctx);
    dy = dx;
  }
}

void QNetwork::average_stats(int64_t batches, const std::function<int64_t(int64_t)>& fill) {
  if (states_.empty()) return;
  for (const QState& st : states_) layers_[st.layer]->init_state(st.data);
  const PassMode mode = mode_;
  averaging_ = true;
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t rows = fill(b);
    mode_ = {true, mode.key, true};
    forward(rows);
  }
  averaging_ = false;
  mode_ = mode;
}

void QNetwork::zero_grad() {
  for (QWeight& w : weights_)
    if (w.grad) std::fill(w.grad, w.grad + w.value.numel(), int64_t{0});
}

void QNetwork::update_head(int bits) {
  for (QWeight& w : weights_) {
    if (!w.grad) continue;
    const int64_t n = w.value.numel();
    const int s = std::max(kernels::range_bits(w.grad, n) - bits, 0);
    for (int64_t i = 0; i < n; ++i)
      w.value.data[i] = kernels::clip_s8(w.value.data[i] - kernels::psto_shift(w.grad[i], s));
  }
}

}  // namespace zotrain
