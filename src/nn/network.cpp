#include "zotrain/nn/network.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

#include "nn/activation_plan.h"
#include "nn/max_pool2d.h"
#include "nn/perturbed_forward.h"
#include "zotrain/core/error.h"
#include "zotrain/core/rng.h"

namespace zotrain {

namespace {

// What a planned buffer is for; plan() reports the rows, allocate() binds them by role.
enum class Role {
  kParam,
  kState,
  kGrad,
  kInput,
  kActivations,
  kWorkspace,
  kScratch,
  kStats,
  kKept
};

struct Slot {
  MemoryRow row;
  Role role;
  int index;     // parameter index (kParam, kGrad), layer (kStats, kKept)
  int lane = 0;  // the perturbation lane of a kActivations, kWorkspace or kScratch buffer
};

// The parameter (or state) tensors of every layer, in order, with the layer that owns each.
struct Owned {
  std::vector<ParamSpec> specs;
  std::vector<int> owner;
  // Tensor `index`, named "<layer>.<name>", at `data`.
  ParamRef ref(int index, float* data) const {
    const int layer = owner[index];
    return {layer,
            index,
            std::to_string(layer) + "." + specs[index].name,
            Tensor(data, specs[index].shape),
            {}};
  }
};

Owned owned(const Network& net, std::vector<ParamSpec> (Layer::*which)() const) {
  Owned o;
  for (int i = 0; i < net.num_layers(); ++i)
    for (const ParamSpec& ps : (net.layer(i).*which)()) {
      o.specs.push_back(ps);
      o.owner.push_back(i);
    }
  return o;
}

int64_t max_of(int64_t a, int64_t b) {
  return a > b ? a : b;
}

}  // namespace

Network::Network(const Shape& item_shape, const std::vector<LayerSpec>& specs)
    : item_shape_(item_shape), specs_(specs), graph_(lower(specs)) {
  if (specs.empty()) ZT_THROW(InputError("a model needs at least one layer"));
  // Shapes are kept with batch 1 and rebuilt for any batch.
  Shape in;
  in.rank = item_shape.rank + 1;
  in[0] = 1;
  for (int i = 0; i < item_shape.rank; ++i) in[i + 1] = item_shape[i];
  shapes_.push_back(in);
  for (const LayerSpec& spec : specs) {
    layers_.push_back(make_layer(spec, shapes_.back()));
    shapes_.push_back(layers_.back()->output_shape(shapes_.back()));
  }
  if (shapes_.back().rank != 2)
    ZT_THROW(
        InputError("the last layer must output [batch, classes], got " + shapes_.back().str()));
}

std::vector<int> Network::param_layers() const {
  std::vector<int> out;
  for (int i = 0; i < num_layers(); ++i)
    if (!layers_[i]->param_specs().empty()) out.push_back(i);
  return out;
}

int Network::head_start(int bp_layers) const {
  std::vector<int> p = param_layers();
  if (bp_layers < 0 || bp_layers > static_cast<int>(p.size()))
    ZT_THROW(InputError("--bp-layers " + std::to_string(bp_layers) +
                        " is out of range: the model has " + std::to_string(p.size()) +
                        " layers with parameters"));
  if (bp_layers == 0) return num_layers();
  if (bp_layers == static_cast<int>(p.size())) return 0;
  return p[p.size() - bp_layers];
}

int64_t Network::forward_macs(int64_t batch, int from) const {
  int64_t macs = 0;
  for (int i = from; i < num_layers(); ++i) macs += layers_[i]->forward_macs(input_shape(i, batch));
  return macs;
}

int64_t Network::num_param_elements() const {
  int64_t n = 0;
  for (const ParamRef& p : params_) n += p.value.numel();
  return n;
}

kernels::Pool2dGeometry Network::pool_windows(int j) const {
  return static_cast<const MaxPool2d&>(*layers_[j]).geometry(input_shape(j, 1));
}

// The fusion pass (nn/graph.h) with what the f32 layers run fused: a max pooling inside the
// layer before it where the layer has a kernel for its windows, a ReLU after the pooling it
// precedes (which then sees a quarter of the elements or less), a ReLU in batch norm's pass.
// Only in the body (no backward pass reads what a node skips) and never across the frozen
// layers' kept output.
Graph Network::fusions(int h, int frozen) const {
  FusionRules rules;
  rules.max_pooled = [&](int i, int j) {
    return layers_[i]->max_pooled_workspace_floats(input_shape(i, 1), pool_windows(j), 1) > 0;
  };
  rules.pool_first = true;
  rules.activated = [&](int i) { return layers_[i]->fuses_relu(); };
  rules.end = h, rules.cut = frozen;
  return zotrain::fuse(graph_, rules);
}

// Scratch floats of a forward pass of layer i on `in` (fused: into its max pooling) with
// `threads` threads, or of its forward and backward passes (in the head).
static int64_t workspace_of(const Network& net, const Graph& groups, int i, int h, const Shape& in,
                            int threads) {
  const Layer& layer = net.layer(i);
  const bool pooled = groups.kind_at(i) == GraphNode::kMaxPooled;
  return static_cast<int64_t>(
      pooled  ? layer.max_pooled_workspace_floats(in, net.pool_windows(groups.last_of(i)), threads)
      : i < h ? layer.forward_workspace_floats(in, threads)
              : layer.workspace_floats(in, threads));
}

// The activations of the passes over layers [from, to): lane 0's (from 0, the whole step)
// or another lane's (its trained body).
static ActivationPlan activations(const Network& net, const Graph& groups, int64_t batch, int from,
                                  int to, int h, int frozen) {
  const int L = net.num_layers();
  auto bytes = [&](int i) { return net.input_shape(i, batch).numel() * int64_t{sizeof(float)}; };
  ActivationRequest r;
  r.from = from, r.to = to, r.head = std::min(h, to), r.frozen = from == 0 ? frozen : 0;
  for (int i = 0; i < L; ++i)
    r.layers.push_back({bytes(i + 1), net.layer(i).in_place(), net.layer(i).backward_needs_output(),
                        groups.last_of(i)});
  if (r.head < to) {
    // Backprop writes dL/dx of the head's layers after the first, alternating two buffers.
    for (int i = h + 1; i < L; ++i) r.backward_bytes = max_of(r.backward_bytes, bytes(i));
    r.backward_buffers = std::min(L - 1 - h, 2);
    r.logits_grad_bytes = bytes(L);
  }
  return plan_activations(r);
}

// A perturbed pass's scratch holds the trained body's parameters as it perturbs them: a layer
// whose node is the layer alone in units (nn/perturbed_forward.h: blocks of rows, a composite's
// children), any other whole. Units take as much as fits in the larger of the largest unit that
// cannot be split and 1/kScratchShare of the rest of the plan (blocks: at least 8 rows), so that
// Full ZO plans about what inference does.
constexpr int64_t kScratchShare = 25;

// Layer i starts a node of its own (a layer inside a fused node is not alone).
static bool runs_in_units(const Graph& groups, int i) {
  return groups.starts[i] >= 0 && groups.kind_at(i) == GraphNode::kLayer && groups.last_of(i) == i;
}

// The scratch's size in floats, the layer that sets it (-1: no trained body) and its unit's rows
// per block (0: whole).
struct Scratch {
  int layer = -1;
  ScratchNeed need;
};
static Scratch perturbed_scratch(const Network& net, const Graph& groups, int h, int frozen,
                                 int64_t rest_bytes) {
  int64_t room = rest_bytes / kScratchShare / int64_t{sizeof(float)};
  for (int i = frozen; i < h; ++i)
    room = std::max(room, runs_in_units(groups, i) ? smallest_unit(net.layer(i))
                                                   : param_elements(net.layer(i)));
  Scratch s;
  for (int i = frozen; i < h; ++i) {
    const ScratchNeed n = runs_in_units(groups, i) ? scratch_need(net.layer(i), room)
                                                   : ScratchNeed{param_elements(net.layer(i)), 0};
    if (n.floats > s.need.floats) s = {i, n};
  }
  return s;
}

// The buffers of a run, in allocation order: parameters, state, gradients, the input, the
// activations of lane 0 (activation_plan.h), kept statistics, scratch and workspace, then each
// further lane's activations, workspace and scratch (the passes of perturbation lanes past the
// first, which write every trained body output into their own block).
// With `passes` false, only the parameters, the state and the input (allocate_parameters); with
// `perturbed` false, no perturbed-parameter scratch (inference_plan).
static std::vector<Slot> plan_slots(const Network& net, const Graph& groups, int64_t batch, int h,
                                    int frozen, int threads, int lanes, bool paired,
                                    bool recompute_blocks, std::vector<ActivationPlan>& acts,
                                    bool passes = true, bool perturbed = true) {
  const int L = net.num_layers();
  ZT_ASSERT(batch > 0 && h >= 0 && h <= L && frozen >= 0 && frozen <= h && frozen < L);
  ZT_ASSERT(lanes >= 1 && (lanes == 1 || frozen < h) && (!paired || (lanes == 1 && frozen < h)));
  std::vector<Slot> slots;
  auto add = [&](int layer, std::string what, Bucket b, int64_t bytes, Role role, int index,
                 int lane = 0) {
    MemoryPlan one;
    one.add(layer, std::move(what), b, static_cast<size_t>(bytes));
    slots.push_back({one.rows[0], role, index, lane});
  };
  auto floats = [](int64_t n) { return n * int64_t{sizeof(float)}; };
  const Owned params = owned(net, &Layer::param_specs), state = owned(net, &Layer::state_specs);
  auto add_each = [&](const Owned& o, const char* suffix, Bucket b, Role role, int from) {
    for (int p = 0; p < static_cast<int>(o.specs.size()); ++p)
      if (o.owner[p] >= from)
        add(o.owner[p], net.layer(o.owner[p]).describe() + " " + o.specs[p].name + suffix, b,
            floats(o.specs[p].shape.numel()), role, p);
  };
  add_each(params, "", Bucket::kParameters, Role::kParam, 0);
  add_each(state, "", Bucket::kParameters, Role::kState, 0);
  add_each(params, " gradient", Bucket::kGradients, Role::kGrad, h);
  add(-1, "input batch", Bucket::kInput, floats(net.input_shape(0, batch).numel()), Role::kInput,
      0);
  acts.clear();
  if (!passes) return slots;
  // Role::kActivations: index is the block's in `acts`, lane its lane (-1: the paired pass).
  auto add_activations = [&](const std::string& name, int from, int to, int lane) {
    acts.push_back(activations(net, groups, batch, from, to, h, frozen));
    const ActivationPlan& a = acts.back();
    add(-1, name + "activations (" + std::to_string(a.buffers) + " buffers placed by lifetime)",
        a.holds_backprop ? Bucket::kActivations : Bucket::kForward, static_cast<int64_t>(a.bytes),
        Role::kActivations, static_cast<int>(acts.size()) - 1, lane);
  };
  add_activations("", 0, L, 0);
  // What head layers keep from forward for backward besides their output: batch norm's
  // statistics (a float pair per double), a residual block's inner activations (or, recomputed,
  // one buffer for the largest block's: index -1).
  size_t shared = 0;
  int shared_layer = -1;
  for (int i = h; i < L; ++i) {
    const Shape in = net.input_shape(i, batch);
    if (const size_t d = net.layer(i).kept_stats_doubles(in))
      add(i, net.layer(i).describe() + " statistics", Bucket::kActivations,
          floats(static_cast<int64_t>(2 * d)), Role::kStats, i);
    const size_t f = net.layer(i).kept_floats(in);
    if (f > 0 && !recompute_blocks)
      add(i, net.layer(i).describe() + " inner activations", Bucket::kActivations,
          floats(static_cast<int64_t>(f)), Role::kKept, i);
    if (f > shared) shared = f, shared_layer = i;
  }
  if (recompute_blocks && shared > 0)
    add(shared_layer, "inner activations of the head's blocks, recomputed in backward",
        Bucket::kWorkspace, floats(static_cast<int64_t>(shared)), Role::kKept, -1);
  // Zeroth-order passes read the body's parameters from a scratch buffer, sized at the end from
  // the rest of the plan (perturbed_scratch).
  const bool scratch = perturbed && net.largest_trained_layer(h, frozen).second > 0;
  if (scratch) add(-1, "perturbed parameters", Bucket::kWorkspace, 0, Role::kScratch, 0);
  // One workspace for all layers; body layers only ever run forward.
  int64_t ws = 0, lane_ws = 0;
  int ws_layer = -1, lane_ws_layer = -1;
  for (int i = 0; i < L; ++i) {
    const Shape in = net.input_shape(i, batch);
    const int64_t w = workspace_of(net, groups, i, h, in, threads);
    if (w > ws) ws = w, ws_layer = i;
    // A lane's body pass runs on one thread; lane 0 runs them in the network's own workspace.
    const int64_t lw =
        lanes > 1 && i >= frozen && i < h ? workspace_of(net, groups, i, h, in, 1) : 0;
    if (lw > lane_ws) lane_ws = lw, lane_ws_layer = i;
    if (lw > ws) ws = lw, ws_layer = i;
  }
  if (ws > 0) add(ws_layer, "workspace", Bucket::kWorkspace, floats(ws), Role::kWorkspace, 0);
  // Lanes past the first: the trained body's activations, workspace and scratch again.
  for (int lane = 1; lane < lanes; ++lane) {
    const std::string name = "lane " + std::to_string(lane) + " ";
    add_activations(name, frozen, h, lane);
    if (lane_ws > 0)
      add(lane_ws_layer, name + "workspace", Bucket::kWorkspace, floats(lane_ws), Role::kWorkspace,
          0, lane);
    if (scratch)
      add(-1, name + "perturbed parameters", Bucket::kWorkspace, 0, Role::kScratch, 0, lane);
  }
  // Paired passes: the second pass's trained body outputs; it shares lane 0's workspace and
  // scratch, since the two passes take turns layer by layer (Network::forward_pair).
  if (paired) add_activations("paired pass ", frozen, h, -1);
  if (scratch) {
    int64_t rest = 0;
    for (const Slot& s : slots) rest += static_cast<int64_t>(s.row.bytes);
    const Scratch sc = perturbed_scratch(net, groups, h, frozen, rest);
    for (Slot& s : slots)
      if (s.role == Role::kScratch) {
        MemoryPlan one;
        one.add(sc.layer,
                sc.need.rows > 0
                    ? s.row.what + " (blocks of " + std::to_string(sc.need.rows) + " rows)"
                    : s.row.what,
                s.row.bucket, static_cast<size_t>(floats(sc.need.floats)));
        s.row = one.rows[0];
      }
  }
  return slots;
}

std::pair<int, int64_t> Network::largest_trained_layer(int head_start, int frozen) const {
  std::pair<int, int64_t> largest{-1, 0};
  for (int i = frozen; i < head_start; ++i) {
    int64_t n = 0;
    for (const ParamSpec& ps : layers_[i]->param_specs()) n += ps.shape.numel();
    if (n > largest.second) largest = {i, n};
  }
  return largest;
}

MemoryPlan Network::plan(int64_t batch, int head_start, int threads, int frozen, int lanes,
                         bool paired, bool recompute_blocks) const {
  MemoryPlan plan;
  std::vector<ActivationPlan> acts;
  for (const Slot& s : plan_slots(*this, fusions(head_start, frozen), batch, head_start, frozen,
                                  threads, lanes, paired, recompute_blocks, acts))
    plan.rows.push_back(s.row);
  return plan;
}

// The fusion pass's groups, and the pairs of head layers that backprop takes in one pass: a
// ReLU and the max pooling after it, a batch norm and the ReLU after it.
void Network::fuse(int head_start, int frozen) {
  fused_ = fusions(head_start, frozen);
  relu_before_pool_.assign(num_layers(), 0.0f);
  relu_after_norm_.assign(num_layers(), 0.0f);
  for (int i = head_start + 1; i < num_layers(); ++i) {
    if (specs_[i].op == Op::kMaxPool2d) relu_before_pool_[i] = activation_cap(specs_[i - 1].op);
    if (layers_[i - 1]->fuses_relu()) relu_after_norm_[i] = activation_cap(specs_[i].op);
  }
}

MemoryPlan Network::inference_plan(int64_t batch, int threads) const {
  MemoryPlan plan;
  std::vector<ActivationPlan> acts;
  for (const Slot& s : plan_slots(*this, fusions(num_layers(), 0), batch, num_layers(), 0, threads,
                                  1, false, false, acts, true, false))
    plan.rows.push_back(s.row);
  return plan;
}

MemoryPlan Network::parameter_plan(int64_t batch) const {
  MemoryPlan plan;
  std::vector<ActivationPlan> acts;
  for (const Slot& s : plan_slots(*this, fusions(num_layers(), 0), batch, num_layers(), 0, 1, 1,
                                  false, false, acts, false))
    plan.rows.push_back(s.row);
  return plan;
}

void Network::allocate_parameters(Arena& arena, int64_t batch, uint64_t seed) {
  allocate(arena, batch, num_layers(), nullptr, seed, 0, 1, false, false, false);
}

void Network::allocate(Arena& arena, int64_t batch, int head_start, ThreadPool* pool, uint64_t seed,
                       int frozen, int lanes, bool paired, bool recompute_blocks) {
  allocate(arena, batch, head_start, pool, seed, frozen, lanes, paired, recompute_blocks, true);
}

void Network::allocate(Arena& arena, int64_t batch, int head_start, ThreadPool* pool, uint64_t seed,
                       int frozen, int lanes, bool paired, bool recompute_blocks, bool passes) {
  ZT_ASSERT(lanes == 1 || pool);
  runs_ = passes;
  recompute_blocks_ = recompute_blocks;
  batch_ = batch;
  head_start_ = head_start;
  frozen_ = frozen;
  params_.clear();
  state_.clear();
  kept_.assign(num_layers(), Tensor());
  stats_.assign(num_layers(), nullptr);
  kept_floats_.assign(num_layers(), nullptr);
  const Owned params = owned(*this, &Layer::param_specs);
  const Owned state = owned(*this, &Layer::state_specs);
  std::vector<Tensor> grads(params.specs.size());
  fuse(head_start, frozen);
  lanes_.assign(lanes, Lane());
  paired_ = Lane();
  std::vector<ActivationPlan> acts;
  for (const Slot& s : plan_slots(*this, fused_, batch, head_start, frozen, pool ? pool->size() : 1,
                                  lanes, paired, recompute_blocks, acts, passes)) {
    float* p = static_cast<float*>(arena.alloc_bytes(s.row.bucket, s.row.bytes));
    switch (s.role) {
      case Role::kParam:
        params_.push_back(params.ref(s.index, p));
        break;
      case Role::kState:
        state_.push_back(state.ref(s.index, p));
        state_.back().value.fill(state.specs[s.index].value);
        break;
      case Role::kGrad:
        grads[s.index] = Tensor(p, params.specs[s.index].shape);
        break;
      case Role::kInput:
        input_ = Tensor(p, input_shape(0, batch));
        break;
      case Role::kActivations:
        bind_activations(acts[s.index], p, s.lane);
        break;
      case Role::kWorkspace:
        lanes_[s.lane].workspace = Tensor(p, Shape{static_cast<int64_t>(s.row.bytes / 4)});
        break;
      case Role::kScratch:
        lanes_[s.lane].scratch = Tensor(p, Shape{static_cast<int64_t>(s.row.bytes / 4)});
        break;
      case Role::kStats:
        stats_[s.index] = reinterpret_cast<double*>(p);
        break;
      case Role::kKept:
        if (s.index >= 0) kept_floats_[s.index] = p;
        for (int i = head_start; i < num_layers() && s.index < 0; ++i)
          if (layers_[i]->kept_floats(input_shape(i, batch)) > 0) kept_floats_[i] = p;
        break;
    }
  }
  lanes_[0].pool = pool;
  for (int k = 1; k < lanes; ++k) lanes_[k].update_stats = false;
  if (paired) {
    std::vector<float*> out = std::move(paired_.out);
    paired_ = lanes_[0];
    paired_.out = std::move(out);
    paired_.update_stats = false;
  }
  for (int i = 0; i < num_layers() && passes; ++i)
    if (lanes_[0].out[i]) kept_[i] = Tensor(lanes_[0].out[i], input_shape(i + 1, batch));
  for (ParamRef& pr : params_) pr.grad = grads[pr.index];
  bind_layers();
  // Initialize: uniform in ±1/sqrt(fan_in), one stream per tensor.
  for (ParamRef& pr : params_) {
    const ParamSpec& ps = params.specs[pr.index];
    Rng rng(seed, 0x100000 + pr.index);
    float bound = ps.fan_in ? 1.0f / std::sqrt(static_cast<float>(ps.fan_in)) : 0.0f;
    for (int64_t k = 0; k < pr.value.numel(); ++k)
      pr.value[k] = ps.fan_in ? rng.uniform(-bound, bound) : ps.value;
  }
}

// Lanes past the first and the paired pass (lane -1) write the trained body's outputs into
// their block, the rest into lane 0's.
void Network::bind_activations(const ActivationPlan& a, float* block, int lane) {
  std::vector<float*>& out = lane < 0 ? paired_.out : lanes_[lane].out;
  if (lane != 0) out = lanes_[0].out;
  out.resize(num_layers(), nullptr);
  auto at = [&](size_t offset) {
    return reinterpret_cast<float*>(reinterpret_cast<std::byte*>(block) + offset);
  };
  for (int i = 0; i < num_layers(); ++i)
    if (a.output[i] != ActivationPlan::kNone) out[i] = at(a.output[i]);
  if (lane != 0) return;
  const int64_t back_floats = a.backward_bytes / int64_t{sizeof(float)};
  for (int k = 0; k < 2; ++k)
    if (a.backward[k] != ActivationPlan::kNone)
      back_[k] = Tensor(at(a.backward[k]), Shape{back_floats});
  if (a.logits_grad != ActivationPlan::kNone)
    dlogits_ = Tensor(at(a.logits_grad), input_shape(num_layers(), batch_));
}

// Hands each layer its parameters, gradients and state.
void Network::bind_layers() {
  for (int i = 0; i < num_layers(); ++i) {
    std::vector<Tensor> values, layer_grads;
    for (const ParamRef& pr : params_)
      if (pr.layer == i) {
        values.push_back(pr.value);
        if (!pr.grad.empty()) layer_grads.push_back(pr.grad);
      }
    layers_[i]->bind(values, layer_grads);
    std::vector<Tensor> layer_state;
    for (const ParamRef& sr : state_)
      if (sr.layer == i) layer_state.push_back(sr.value);
    layers_[i]->bind_state(layer_state);
  }
}

Tensor Network::output_buffer(int i, int64_t rows, Lane& lane) const {
  ZT_ASSERT(lane.out[i]);
  return Tensor(lane.out[i], input_shape(i + 1, rows));
}

ExecContext Network::context(int layer, Lane& lane) {
  ExecContext ctx{lane.pool, lane.workspace.empty() ? nullptr : lane.workspace.data()};
  const bool frozen = layer < frozen_;
  ctx.training = mode_.training && !frozen;
  ctx.key = layer_key(mode_.key, layer);
  ctx.update_stats = mode_.update_stats && lane.update_stats && !frozen;
  ctx.stats = stats_[layer];
  ctx.kept = kept_floats_[layer];
  ctx.recompute_kept = recompute_blocks_;
  return ctx;
}

Tensor Network::forward(int64_t rows, const ParamTransform* body) {
  ZT_ASSERT(runs_ && rows > 0 && rows <= batch_);
  return run(input(rows), 0, num_layers(), body, lanes_[0]);
}

void Network::forward_frozen(int64_t rows) {
  ZT_ASSERT(runs_ && rows > 0 && rows <= batch_);
  run(input(rows), 0, frozen_, nullptr, lanes_[0]);
}

Tensor Network::trained_input(int64_t rows) const {
  return frozen_ == 0 ? input(rows) : kept_[frozen_ - 1].rows(0, rows);
}

Tensor Network::forward_trained(int64_t rows, const ParamTransform* body) {
  ZT_ASSERT(runs_ && rows > 0 && rows <= batch_);
  return run(trained_input(rows), frozen_, num_layers(), body, lanes_[0]);
}

Tensor Network::forward_trained_tapped(int64_t rows, int layer, const OutputTap& tap) {
  ZT_ASSERT(runs_ && rows > 0 && rows <= batch_ && layer >= frozen_ && layer < head_start_);
  const GraphNode::Kind kind = fused_.node_at(layer).kind;
  ZT_ASSERT(fused_.node_at(layer).first == layer &&
                (kind == GraphNode::kLayer || kind == GraphNode::kActivated),
            "a tap needs a layer that runs alone or with its activation only");
  tap_layer_ = layer;
  tap_ = &tap;
  const Tensor logits = run(trained_input(rows), frozen_, num_layers(), nullptr, lanes_[0]);
  tap_layer_ = -1;
  tap_ = nullptr;
  return logits;
}

std::vector<Tensor> Network::forward_lanes(int64_t rows,
                                           const std::vector<const ParamTransform*>& body) {
  const int n = static_cast<int>(body.size());
  ZT_ASSERT(rows > 0 && rows <= batch_ && n >= 1 && n <= lanes() && frozen_ < head_start_);
  const Tensor x = trained_input(rows);
  std::vector<Tensor> out(n);
  if (n == 1) {
    out[0] = run(x, frozen_, head_start_, body[0], lanes_[0]);  // on the whole pool
    return out;
  }
  // Each pass on one worker, in its lane's buffers, with no parallel region inside it.
  Lane solo = lanes_[0];
  solo.pool = nullptr;
  ThreadPool* pool = lanes_[0].pool;
  pool->run([&](int worker) {
    for (int k = worker; k < n; k += pool->size())
      out[k] = run(x, frozen_, head_start_, body[k], k == 0 ? solo : lanes_[k]);
  });
  return out;
}

std::array<Tensor, 2> Network::forward_pair(int64_t rows, const ParamTransform* first,
                                            const ParamTransform* second) {
  ZT_ASSERT(runs_ && rows > 0 && rows <= batch_ && !paired_.out.empty());
  Tensor a = trained_input(rows), b = a;
  for (int i = frozen_; i < head_start_; i = fused_.last_of(i) + 1) {
    const int next = fused_.last_of(i) + 1;
    a = run(a, i, next, first, lanes_[0]);
    b = run(b, i, next, second, paired_);
  }
  return {a, b};
}

Tensor Network::forward_head(const Tensor& body_output) {
  const int64_t rows = body_output.shape()[0];
  if (head_start_ == num_layers()) return body_output;
  Tensor x = kept_[head_start_ - 1].rows(0, rows);
  if (x.data() != body_output.data()) x.copy_from(body_output);
  return run(x, head_start_, num_layers(), nullptr, lanes_[0]);
}

Tensor Network::run(Tensor x, int from, int to, const ParamTransform* body, Lane& lane) {
  const int64_t rows = x.shape()[0];
  std::vector<Tensor> transformed;
  // The perturbed layer's parameters [first, first + count) as `body` writes them into the
  // scratch: rows [o0, o1) of each tensor, or the whole tensors (o1 = 0).
  int layer = -1;
  const ParamWriter write = [&](size_t first, size_t count, int64_t o0, int64_t o1) {
    transformed.clear();
    float* dst = lane.scratch.data();
    size_t k = 0;
    for (const ParamRef& p : params_) {
      if (p.layer != layer || k++ < first) continue;
      if (transformed.size() == count) break;
      const int64_t row = o1 > 0 ? p.value.numel() / p.value.shape()[0] : 0;
      const int64_t begin = o0 * row, n = o1 > 0 ? (o1 - o0) * row : p.value.numel();
      parallel_for(lane.pool, n,
                   [&](int64_t b, int64_t e) { (*body)(p, dst + b, begin + b, begin + e); });
      transformed.emplace_back(dst, o1 > 0 ? p.value.shape().with_batch(o1 - o0) : p.value.shape());
      dst += n;
    }
    return static_cast<const Tensor*>(transformed.data());
  };
  for (int i = from; i < to; ++i) {
    ExecContext ctx = context(i, lane);
    const bool perturbed = body && i >= frozen_ && i < head_start_ && !layers_[i]->params().empty();
    if (perturbed) {
      layer = i;
      ctx.write_params = &write;
      ctx.scratch_floats = lane.scratch.numel();
      if (runs_in_units(fused_, i)) {
        // One block of output features or one child at a time (nn/perturbed_forward.h).
        Tensor y = output_buffer(i, rows, lane);
        forward_perturbed(*layers_[i], 0, x, y, ctx);
        x = y;
        continue;
      }
      ctx = with_written_params(*layers_[i], 0, ctx);
    }
    const GraphNode& f = fused_.node_at(i);
    ZT_ASSERT(f.last < to);
    // A node writes its last layer's output; batch norm + ReLU's is the ReLU's buffer, which
    // is batch norm's (a ReLU runs in place).
    Tensor y = output_buffer(f.last, rows, lane);
    switch (f.kind) {
      case GraphNode::kMaxPooled:
        layers_[i]->forward_max_pooled(x, pool_windows(f.last), y, ctx);
        if (f.act >= 0) layers_[f.act]->forward(y, y, context(f.act, lane));
        break;
      case GraphNode::kPoolFirst:
        layers_[i + 1]->forward(x, y, context(i + 1, lane));
        layers_[i]->forward(y, y, ctx);
        break;
      case GraphNode::kActivated:
        if (i != tap_layer_) {
          layers_[i]->forward_relu(x, y, activation_cap(specs_[f.act].op), ctx);
          break;
        }
        // Tapped: the layer, the tap on its output, then its activation in place.
        layers_[i]->forward(x, y, ctx);
        (*tap_)(x, y);
        layers_[f.act]->forward(y, y, context(f.act, lane));
        break;
      case GraphNode::kLayer:
        layers_[i]->forward(x, y, ctx);
        if (i == tap_layer_) (*tap_)(x, y);
        break;
      case GraphNode::kFoldedNorm:
        ZT_ASSERT(false, "f32 passes keep batch norm a layer");
        break;
    }
    x = y;
    i = f.last;
  }
  return x;
}

void Network::backward(const Tensor& dlogits) {
  const int L = num_layers();
  ZT_ASSERT(head_start_ < L);
  int64_t rows = dlogits.shape()[0];
  Tensor dy = dlogits;
  int next = 0;  // the backward ping-pong buffer the next dx goes to (not dy's)
  for (int i = L - 1; i >= head_start_; --i) {
    ExecContext ctx = context(i, lanes_[0]);
    ctx.stats_kept = true;  // by the forward this backward follows
    Tensor x = i == 0 ? input(rows) : kept_[i - 1].rows(0, rows);
    Tensor y = kept_[i].rows(0, rows);
    // A max pooling after a ReLU: one pass routes dy to the ReLU's input. A ReLU after batch
    // norm: batch norm's backward gates dy by the ReLU.
    const float cap = relu_before_pool_[i], gate = relu_after_norm_[i];
    const int through = cap > 0.0f || gate > 0.0f ? i - 1 : i;  // the layer whose dx it writes
    Tensor dx =
        through > head_start_ ? Tensor(back_[next].data(), input_shape(through, rows)) : Tensor();
    if (cap > 0.0f) {
      if (!dx.empty())
        static_cast<const MaxPool2d&>(*layers_[i]).backward_through_relu(x, dy, dx, cap, ctx);
    } else if (gate > 0.0f) {
      ExecContext norm = context(through, lanes_[0]);
      norm.stats_kept = true;
      const Tensor in = through == 0 ? input(rows) : kept_[through - 1].rows(0, rows);
      layers_[through]->backward_relu(in, dy, dx, gate, norm);
    } else {
      layers_[i]->backward(x, y, dy, dx, ctx);
    }
    next ^= 1;
    dy = dx;
    i = through;
  }
}

void Network::zero_grad() {
  for (ParamRef& p : params_)
    if (!p.grad.empty()) p.grad.fill(0.0f);
}

}  // namespace zotrain
