#include "zotrain/nn/network.h"

#include <algorithm>
#include <cmath>

#include "zotrain/core/error.h"
#include "zotrain/core/rng.h"
#include "zotrain/nn/max_pool2d.h"

namespace zotrain {

namespace {

// What a planned buffer is for; plan() reports the rows, allocate() binds them by role.
enum class Role {
  kParam,
  kState,
  kGrad,
  kInput,
  kKept,
  kPing,
  kBack,
  kLogitsGrad,
  kWorkspace,
  kScratch
};

struct Slot {
  MemoryRow row;
  Role role;
  int index;  // parameter index (kParam, kGrad), layer (kKept), buffer number (kPing, kBack)
};

int64_t max_of(int64_t a, int64_t b) {
  return a > b ? a : b;
}

}  // namespace

Network::Network(const Shape& item_shape, const std::vector<LayerSpec>& specs)
    : item_shape_(item_shape), specs_(specs) {
  if (specs.empty()) throw InputError("a model needs at least one layer");
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
    throw InputError("the last layer must output [batch, classes], got " + shapes_.back().str());
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
    throw InputError("--bp-layers " + std::to_string(bp_layers) +
                     " is out of range: the model has " + std::to_string(p.size()) +
                     " layers with parameters");
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

int Network::max_pool_after(int i) const {
  if (i + 1 >= num_layers()) return -1;
  const int j = layers_[i + 1]->monotone_elementwise() ? i + 2 : i + 1;
  return j < num_layers() && dynamic_cast<const MaxPool2d*>(layers_[j].get()) ? j : -1;
}

kernels::Pool2dGeometry Network::pool_windows(int j) const {
  return static_cast<const MaxPool2d&>(*layers_[j]).geometry(input_shape(j, 1));
}

// Where forward-only passes fuse a max pooling into the layer before it (max_pool_after):
// fused[i] is the pooling layer, whose monotone layer before it then runs on the pooled output
// (Network::run); -1 elsewhere. Only in the body, and never across the frozen layers' kept
// output: the outputs skipped are read by no backward pass and no later pass.
static std::vector<int> fused_max_pools(const Network& net, int h, int frozen) {
  std::vector<int> fused(net.num_layers(), -1);
  for (int i = 0; i + 1 < h; ++i) {
    const int j = net.max_pool_after(i);
    if (j < 0 || j >= h || (i <= frozen - 1 && frozen - 1 < j)) continue;
    if (net.layer(i).max_pooled_workspace_floats(net.input_shape(i, 1), net.pool_windows(j), 1))
      fused[i] = j;
  }
  return fused;
}

// The buffers of a run, in allocation order. buf[i] says where layer i writes its output:
// a forward ping-pong buffer (kPingA + k), its own kept buffer (kOwn), or the kept buffer of
// layer j (j >= 0, in-place layers of the head).
static std::vector<Slot> plan_slots(const Network& net, const std::vector<Shape>& shapes,
                                    int64_t batch, int h, int frozen, int threads,
                                    std::vector<int>& buf) {
  const int L = net.num_layers();
  buf.assign(L, Network::kOwn);
  ZT_ASSERT(batch > 0 && h >= 0 && h <= L && frozen >= 0 && frozen <= h && frozen < L);
  std::vector<Slot> slots;
  auto add = [&](int layer, std::string what, Bucket b, int64_t floats, Role role, int index) {
    MemoryPlan one;
    one.add(layer, std::move(what), b, static_cast<size_t>(floats) * sizeof(float));
    slots.push_back({one.rows[0], role, index});
  };
  struct Param {
    int layer;
    std::string what;
    int64_t numel;
  };
  std::vector<Param> params;
  for (int i = 0; i < L; ++i)
    for (const ParamSpec& ps : net.layer(i).param_specs())
      params.push_back({i, net.layer(i).describe() + " " + ps.name, ps.shape.numel()});
  for (int p = 0; p < static_cast<int>(params.size()); ++p)
    add(params[p].layer, params[p].what, Bucket::kParameters, params[p].numel, Role::kParam, p);
  int state_index = 0;
  for (int i = 0; i < L; ++i)
    for (const ParamSpec& ss : net.layer(i).state_specs())
      add(i, net.layer(i).describe() + " " + ss.name, Bucket::kParameters, ss.shape.numel(),
          Role::kState, state_index++);
  for (int p = 0; p < static_cast<int>(params.size()); ++p)
    if (params[p].layer >= h)
      add(params[p].layer, params[p].what + " gradient", Bucket::kGradients, params[p].numel,
          Role::kGrad, p);
  auto numel = [&](int i) { return shapes[i].with_batch(batch).numel(); };
  add(-1, "input batch", Bucket::kInput, numel(0), Role::kInput, 0);
  // Kept activations: the head's input and every head output. An in-place layer (ReLU) shares
  // its input's buffer when the layer before does not need its own output for backprop.
  if (h < L)
    for (int i = std::max(h - 1, 0); i < L; ++i) {
      if (i >= h && i > 0 && i - 1 >= std::max(h - 1, 0) && net.layer(i).in_place() &&
          !net.layer(i - 1).backward_needs_output()) {
        buf[i] = buf[i - 1] >= 0 ? buf[i - 1] : i - 1;
        continue;
      }
      add(i, net.layer(i).describe() + " output", Bucket::kActivations, numel(i + 1), Role::kKept,
          i);
    }
  // Body layers that do not feed the head write into two alternating buffers, each as large
  // as the largest output it takes; layers that can run in place stay in their input's buffer.
  // The frozen layers' output, which the step's passes start from, is kept.
  int body_outputs = h < L ? std::max(h - 1, 0) : L;
  if (frozen > 0 && frozen - 1 < body_outputs)
    add(frozen - 1, net.layer(frozen - 1).describe() + " output (frozen features)",
        Bucket::kActivations, numel(frozen), Role::kKept, frozen - 1);
  const std::vector<int> fused = fused_max_pools(net, h, frozen);
  int64_t ping[2] = {0, 0};
  int cur = -1;  // buffer holding the current activation; -1: one never overwritten
  for (int i = 0; i < body_outputs; ++i) {
    const bool fuses = fused[i] >= 0;
    if (fuses) i = fused[i];  // the layers before the pooling write no output
    if (i >= body_outputs) break;
    if (i == frozen - 1) {
      cur = -1;
      continue;
    }
    // A fused pooling's output is not the buffer its group reads.
    if (fuses || !(net.layer(i).in_place() && cur >= 0)) cur = cur == 0 ? 1 : 0;
    buf[i] = Network::kPingA + cur;
    ping[cur] = max_of(ping[cur], numel(i + 1));
  }
  for (int k = 0; k < 2; ++k)
    if (ping[k] > 0)
      add(-1, "forward ping-pong " + std::string(1, static_cast<char>('A' + k)), Bucket::kForward,
          ping[k], Role::kPing, k);
  // Backprop writes dL/dx of head layers after the first into two alternating buffers.
  int64_t back = 0;
  int back_count = 0;
  for (int i = h + 1; i < L; ++i, ++back_count) back = max_of(back, numel(i));
  for (int k = 0; k < std::min(back_count, 2); ++k)
    add(-1, "backward ping-pong " + std::string(1, static_cast<char>('A' + k)), Bucket::kGradients,
        back, Role::kBack, k);
  if (h < L) add(-1, "logits gradient", Bucket::kLoss, numel(L), Role::kLogitsGrad, 0);
  // Zeroth-order passes read the body's parameters from a scratch buffer of one layer's size.
  int64_t scratch = 0;
  int scratch_layer = -1;
  for (int i = frozen; i < h; ++i) {
    int64_t n = 0;
    for (const ParamSpec& ps : net.layer(i).param_specs()) n += ps.shape.numel();
    if (n > scratch) scratch = n, scratch_layer = i;
  }
  if (scratch > 0)
    add(scratch_layer, "perturbed parameters", Bucket::kWorkspace, scratch, Role::kScratch, 0);
  // One workspace for all layers; body layers only ever run forward.
  int64_t ws = 0;
  int ws_layer = -1;
  for (int i = 0; i < L; ++i) {
    const Layer& layer = net.layer(i);
    const Shape in = shapes[i].with_batch(batch);
    const int j = fused[i];
    const auto w = static_cast<int64_t>(
        j >= 0  ? layer.max_pooled_workspace_floats(in, net.pool_windows(j), threads)
        : i < h ? layer.forward_workspace_floats(in, threads)
                : layer.workspace_floats(in, threads));
    if (w > ws) ws = w, ws_layer = i;
  }
  if (ws > 0) add(ws_layer, "workspace", Bucket::kWorkspace, ws, Role::kWorkspace, 0);
  return slots;
}

MemoryPlan Network::plan(int64_t batch, int head_start, int threads, int frozen) const {
  MemoryPlan plan;
  std::vector<int> buf;
  for (const Slot& s : plan_slots(*this, shapes_, batch, head_start, frozen, threads, buf))
    plan.rows.push_back(s.row);
  return plan;
}

void Network::allocate(Arena& arena, int64_t batch, int head_start, ThreadPool* pool, uint64_t seed,
                       int frozen) {
  batch_ = batch;
  head_start_ = head_start;
  frozen_ = frozen;
  pool_ = pool;
  params_.clear();
  state_.clear();
  kept_.assign(num_layers(), Tensor());
  std::vector<ParamSpec> specs, state_specs;
  std::vector<int> owner, state_owner;
  for (int i = 0; i < num_layers(); ++i) {
    for (const ParamSpec& ps : layers_[i]->param_specs()) {
      specs.push_back(ps);
      owner.push_back(i);
    }
    for (const ParamSpec& ss : layers_[i]->state_specs()) {
      state_specs.push_back(ss);
      state_owner.push_back(i);
    }
  }
  std::vector<Tensor> grads(specs.size());
  fused_pool_ = fused_max_pools(*this, head_start, frozen);
  for (const Slot& s :
       plan_slots(*this, shapes_, batch, head_start, frozen, pool ? pool->size() : 1, out_buf_)) {
    float* p = static_cast<float*>(arena.alloc_bytes(s.row.bucket, s.row.bytes));
    switch (s.role) {
      case Role::kParam: {
        const ParamSpec& ps = specs[s.index];
        int layer = owner[s.index];
        params_.push_back(
            {layer, s.index, std::to_string(layer) + "." + ps.name, Tensor(p, ps.shape), {}});
        break;
      }
      case Role::kState: {
        const ParamSpec& ss = state_specs[s.index];
        const int layer = state_owner[s.index];
        state_.push_back(
            {layer, s.index, std::to_string(layer) + "." + ss.name, Tensor(p, ss.shape), {}});
        state_.back().value.fill(ss.value);
        break;
      }
      case Role::kGrad:
        grads[s.index] = Tensor(p, specs[s.index].shape);
        break;
      case Role::kInput:
        input_ = Tensor(p, input_shape(0, batch));
        break;
      case Role::kKept:
        kept_[s.index] = Tensor(p, input_shape(s.index + 1, batch));
        break;
      case Role::kPing:
        ping_[s.index] = Tensor(p, Shape{static_cast<int64_t>(s.row.bytes / 4)});
        break;
      case Role::kBack:
        back_[s.index] = Tensor(p, Shape{static_cast<int64_t>(s.row.bytes / 4)});
        break;
      case Role::kLogitsGrad:
        dlogits_ = Tensor(p, input_shape(num_layers(), batch));
        break;
      case Role::kWorkspace:
        workspace_ = Tensor(p, Shape{static_cast<int64_t>(s.row.bytes / 4)});
        break;
      case Role::kScratch:
        body_scratch_ = Tensor(p, Shape{static_cast<int64_t>(s.row.bytes / 4)});
        break;
    }
  }
  for (int i = 0; i < num_layers(); ++i)
    if (out_buf_[i] >= 0) kept_[i] = kept_[out_buf_[i]].view(input_shape(i + 1, batch));
  for (ParamRef& pr : params_) pr.grad = grads[pr.index];
  // Bind each layer's tensors and initialize: uniform in ±1/sqrt(fan_in), one stream per tensor.
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
  for (ParamRef& pr : params_) {
    const ParamSpec& ps = specs[pr.index];
    Rng rng(seed, 0x100000 + pr.index);
    float bound = ps.fan_in ? 1.0f / std::sqrt(static_cast<float>(ps.fan_in)) : 0.0f;
    for (int64_t k = 0; k < pr.value.numel(); ++k)
      pr.value[k] = ps.fan_in ? rng.uniform(-bound, bound) : ps.value;
  }
}

Tensor Network::output_buffer(int i, int64_t rows) const {
  if (!kept_[i].empty()) return kept_[i].rows(0, rows);
  return Tensor(const_cast<float*>(ping_[out_buf_[i] - kPingA].data()), input_shape(i + 1, rows));
}

ExecContext Network::context(int layer) {
  ExecContext ctx{pool_, workspace_.empty() ? nullptr : workspace_.data()};
  const bool frozen = layer < frozen_;
  ctx.training = mode_.training && !frozen;
  ctx.key = layer_key(mode_.key, layer);
  ctx.update_stats = mode_.update_stats && !frozen;
  return ctx;
}

Tensor Network::forward(int64_t rows, const ParamTransform* body) {
  ZT_ASSERT(rows > 0 && rows <= batch_);
  return run(input(rows), 0, num_layers(), body);
}

void Network::forward_frozen(int64_t rows) {
  ZT_ASSERT(rows > 0 && rows <= batch_);
  run(input(rows), 0, frozen_, nullptr);
}

Tensor Network::forward_trained(int64_t rows, const ParamTransform* body) {
  ZT_ASSERT(rows > 0 && rows <= batch_);
  return run(frozen_ == 0 ? input(rows) : kept_[frozen_ - 1].rows(0, rows), frozen_, num_layers(),
             body);
}

Tensor Network::run(Tensor x, int from, int to, const ParamTransform* body) {
  const int64_t rows = x.shape()[0];
  std::vector<Tensor> transformed;
  for (int i = from; i < to; ++i) {
    ExecContext ctx = context(i);
    if (body && i >= frozen_ && i < head_start_ && !layers_[i]->param_specs().empty()) {
      transformed.clear();
      float* dst = body_scratch_.data();
      for (const ParamRef& p : params_)
        if (p.layer == i) {
          parallel_for(pool_, p.value.numel(),
                       [&](int64_t b, int64_t e) { (*body)(p, dst, b, e); });
          transformed.emplace_back(dst, p.value.shape());
          dst += p.value.numel();
        }
      ctx.params = transformed.data();
    }
    if (const int j = fused_pool_[i]; j >= 0) {
      ZT_ASSERT(j < to);
      Tensor y = output_buffer(j, rows);
      layers_[i]->forward_max_pooled(x, pool_windows(j), y, ctx);
      if (j == i + 2) layers_[i + 1]->forward(y, y, context(i + 1));  // the monotone layer
      x = y;
      i = j;
      continue;
    }
    // max(f(a), f(b)) = f(max(a, b)) for a non-decreasing f (ReLU): pooling first leaves f a
    // half (2x2 windows: a quarter) or less of the elements, with the same result bit for bit.
    // Only where no backward pass reads f's output or the pooling's input (below the head).
    if (i + 1 < to && i + 1 < head_start_ && layers_[i]->monotone_elementwise() &&
        layers_[i + 1]->max_pooling()) {
      Tensor y = output_buffer(i + 1, rows);
      layers_[i + 1]->forward(x, y, context(i + 1));
      layers_[i]->forward(y, y, ctx);
      x = y;
      ++i;
      continue;
    }
    Tensor y = output_buffer(i, rows);
    layers_[i]->forward(x, y, ctx);
    x = y;
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
    const ExecContext ctx = context(i);
    Tensor x = i == 0 ? input(rows) : kept_[i - 1].rows(0, rows);
    Tensor y = kept_[i].rows(0, rows);
    // A max pooling after a ReLU: one pass routes dy to the ReLU's input.
    const auto* pool = dynamic_cast<const MaxPool2d*>(layers_[i].get());
    const float cap = pool && i - 1 >= head_start_ ? layers_[i - 1]->relu_cap() : 0.0f;
    const int through = cap > 0.0f ? i - 1 : i;  // the layer whose dx this step writes
    Tensor dx =
        through > head_start_ ? Tensor(back_[next].data(), input_shape(through, rows)) : Tensor();
    if (cap > 0.0f) {
      if (!dx.empty()) pool->backward_through_relu(x, dy, dx, cap, ctx);
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
