#include "nn/residual.h"

#include <algorithm>

#include "core/memory_planner.h"
#include "nn/perturbed_forward.h"
#include "zotrain/core/error.h"
#include "zotrain/nn/graph.h"
#include "zotrain/nn/network.h"

namespace zotrain {

namespace {

// Workspace buffers start on 64-byte boundaries, as arena buffers do.
size_t aligned(size_t floats) {
  return (floats + 15) / 16 * 16;
}

size_t numel(const Shape& item, int64_t batch) {
  return static_cast<size_t>(item.with_batch(batch).numel());
}

}  // namespace

Residual::Residual(const LayerSpec& spec, const Shape& in) {
  auto build = [&](const std::vector<LayerSpec>& chain, const std::string& name) {
    Shape s = in;
    for (size_t i = 0; i < chain.size(); ++i) {
      Child c{make_layer(chain[i], s), name + "." + std::to_string(i), s, {}};
      s = c.out = c.layer->output_shape(s);
      children_.push_back(std::move(c));
    }
    return s;
  };
  if (spec.main.empty()) ZT_THROW(InputError("residual on input " + in.str() + ": main is empty"));
  out_ = build(spec.main, "main");
  num_main_ = children_.size();
  const Shape shortcut = build(spec.shortcut, "shortcut");
  if (shortcut != out_)
    ZT_THROW(InputError("residual on input " + in.str() + ": main gives " + out_.str() +
                        " but the shortcut " + shortcut.str()));
  // A ReLU after batch norm in the same chain runs in batch norm's pass (forward only), into
  // the ReLU's buffer (which may be batch norm's input buffer: batch norm may run in place).
  auto fuse_chain = [&](const std::vector<LayerSpec>& chain, size_t first) {
    FusionRules rules;
    rules.activated = [&](int i) { return children_[first + i].layer->fuses_relu(); };
    for (const GraphNode& n : fuse(lower(chain), rules).nodes)
      if (n.kind == GraphNode::kActivated)
        children_[first + n.first].relu_fused = activation_cap(chain[n.act].op);
  };
  fuse_chain(spec.main, 0);
  fuse_chain(spec.shortcut, num_main_);
  size_t params = 0, state = 0;
  for (Child& c : children_) {
    c.first_param = params, c.first_state = state, c.first_stats = kept_stats_;
    params += c.layer->param_specs().size();
    state += c.layer->state_specs().size();
    kept_stats_ += c.layer->kept_stats_doubles(c.in);  // per channel: any batch
  }
  if (spec.post_relu) post_ = make_layer(LayerSpec::relu(), out_);
}

std::string Residual::describe() const {
  auto chain = [&](size_t begin, size_t end) {
    std::string s = "[";
    for (size_t i = begin; i < end; ++i)
      s += (i == begin ? "" : ", ") + children_[i].layer->describe();
    return s + "]";
  };
  const bool identity = num_main_ == children_.size();
  return "residual " + chain(0, num_main_) + " + " +
         (identity ? "identity" : chain(num_main_, children_.size())) +
         (post_ ? ", " + post_->describe() : "");
}

std::vector<ParamSpec> Residual::prefixed(std::vector<ParamSpec> (Layer::*specs)() const) const {
  std::vector<ParamSpec> all;
  for (const Child& c : children_)
    for (ParamSpec s : (*c.layer.*specs)()) {
      s.name = c.name + "." + s.name;
      all.push_back(std::move(s));
    }
  return all;
}

std::vector<ParamSpec> Residual::param_specs() const {
  return prefixed(&Layer::param_specs);
}

std::vector<ParamSpec> Residual::state_specs() const {
  return prefixed(&Layer::state_specs);
}

Residual::Layout Residual::layout(const Shape& in, int threads) const {
  const int64_t n = in[0];
  const size_t count = children_.size();
  size_t child_work = 0, largest_in = 0;
  for (const Child& c : children_) {
    child_work = std::max(child_work, c.layer->workspace_floats(c.in.with_batch(n), threads));
    largest_in = std::max(largest_in, numel(c.in, n));
  }
  // The children's own workspace comes first, shared by forward and backward; after it, the
  // buffers of each pass placed by their lifetimes (MemoryPlanner, in bytes of floats).
  Layout l{};
  l.out.assign(count, 0);
  const size_t base = aligned(child_work);
  auto bytes = [](size_t floats) { return floats * sizeof(float); };
  // Forward: a child's output lives from the child (or fused pair) that writes it to the one
  // that reads it; main's last writes y, and the shortcut's last output is read by the sum.
  MemoryPlanner fwd;
  std::vector<int> id(count, -1);
  const int end = static_cast<int>(count);
  int prev = -1;  // the buffer the current child reads; -1: x
  for (size_t i = 0; i < count; ++i) {
    if (i == num_main_) prev = -1;
    const auto t = static_cast<int>(i);
    if (prev >= 0) fwd.extend(prev, t);
    const size_t writes = children_[i].relu_fused > 0.0f ? i + 1 : i;  // a fused pair
    if (writes + 1 != num_main_) {
      id[writes] = prev = fwd.add(bytes(numel(children_[writes].out, n)), t, t);
      if (writes + 1 == count) fwd.extend(prev, end);
    }
    i = writes;
  }
  fwd.plan();
  for (size_t i = 0; i < count; ++i)
    if (id[i] >= 0) l.out[i] = base + fwd.offset(id[i]) / sizeof(float);
  l.forward_end = base + fwd.total() / sizeof(float);
  // Kept by a training forward for backward: the output of every child, one after the other
  // (a fused pair writes only its second's, and its backward reads neither).
  size_t kept = 0;
  for (const Child& c : children_) {
    l.kept.push_back(kept);
    if (c.relu_fused == 0.0f) kept += aligned(numel(c.out, n));
  }
  l.kept_end = kept;
  // Backward: the post's gradient and two ping-pong buffers for the gradients inside the block,
  // all alive through the whole pass.
  MemoryPlanner bwd;
  const int post = bwd.add(bytes(post_ ? numel(out_, n) : 0), 0, 0);
  const int back[2] = {bwd.add(bytes(largest_in), 0, 0), bwd.add(bytes(largest_in), 0, 0)};
  bwd.plan();
  l.post_grad = base + bwd.offset(post) / sizeof(float);
  for (int k = 0; k < 2; ++k) l.back[k] = base + bwd.offset(back[k]) / sizeof(float);
  l.backward_end = base + bwd.total() / sizeof(float);
  return l;
}

size_t Residual::workspace_floats(const Shape& in, int threads) const {
  const Layout l = layout(in, threads);
  return std::max(l.forward_end, l.backward_end);
}

size_t Residual::forward_workspace_floats(const Shape& in, int threads) const {
  return layout(in, threads).forward_end;
}

size_t Residual::kept_floats(const Shape& in) const {
  return layout(in, 1).kept_end;
}

int64_t Residual::forward_macs(const Shape& in) const {
  int64_t macs = 0;
  for (const Child& c : children_) macs += c.layer->forward_macs(c.in.with_batch(in[0]));
  return macs;
}

ExecContext Residual::child_context(const ExecContext& ctx, size_t i) const {
  ExecContext c = ctx;
  if (ctx.params) c.params = ctx.params + children_[i].first_param;
  if (ctx.stats) c.stats = ctx.stats + children_[i].first_stats;
  c.key = layer_key(ctx.key, static_cast<int>(i));  // distinct dropout masks per child
  return c;
}

std::vector<const Layer*> Residual::children() const {
  std::vector<const Layer*> layers;
  for (const Child& c : children_) layers.push_back(c.layer.get());
  return layers;
}

void Residual::run_children(const Tensor& x, const std::vector<float*>& out,
                            const ExecContext& ctx) const {
  const int64_t n = x.shape()[0];
  Tensor in = x;
  for (size_t i = 0; i < children_.size(); ++i) {
    const Child& c = children_[i];
    if (i == num_main_) in = x;  // the shortcut starts again from x
    if (c.relu_fused > 0.0f) {
      Tensor y(out[i + 1], c.out.with_batch(n));
      c.layer->forward_relu(in, y, c.relu_fused,
                            with_written_params(*c.layer, c.first_param, child_context(ctx, i)));
      in = y;
      ++i;
      continue;
    }
    Tensor y(out[i], c.out.with_batch(n));
    forward_perturbed(*c.layer, c.first_param, in, y, child_context(ctx, i));
    in = y;
  }
}

void Residual::add(Tensor& y, const Tensor& a, const Tensor& b, const ExecContext& ctx) {
  const int64_t row = y.shape().row_numel();
  parallel_for(ctx.pool, y.shape()[0], [&](int64_t r0, int64_t r1) {
    for (int64_t k = r0 * row; k < r1 * row; ++k) y[k] = a[k] + b[k];
  });
}

void Residual::forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const {
  const Layout l = layout(x.shape(), ctx.threads());
  const bool keep = ctx.training && ctx.kept;
  std::vector<float*> out;
  for (size_t i = 0; i < children_.size(); ++i)
    out.push_back(keep                 ? ctx.kept + l.kept[i]
                  : i + 1 == num_main_ ? y.data()
                                       : ctx.workspace + l.out[i]);
  run_children(x, out, ctx);
  const Tensor shortcut = num_main_ == children_.size() ? x : Tensor(out.back(), y.shape());
  if (keep)
    add(y, Tensor(out[num_main_ - 1], y.shape()), shortcut, ctx);
  else
    add(y, y, shortcut, ctx);
  if (post_) post_->forward(y, y, ctx);
}

void Residual::backward_chain(size_t begin, size_t end, const Tensor& x,
                              const std::vector<float*>& out, const Tensor& dy, Tensor& dx,
                              float* const back[2], const ExecContext& ctx) {
  const int64_t n = x.shape()[0];
  // The steps from the last child's: a child with the ReLU after it fused takes both.
  std::vector<size_t> steps;
  for (size_t i = end; i-- > begin;) {
    if (i > begin && children_[i - 1].relu_fused > 0.0f) --i;
    steps.push_back(i);
  }
  Tensor grad = dy;
  for (size_t s = 0; s < steps.size(); ++s) {
    const size_t i = steps[s];
    const Child& c = children_[i];
    const Tensor in = i == begin ? x : Tensor(out[i - 1], c.in.with_batch(n));
    // The gradients alternate, the one begin's step reads in back[1]: dx may be back[0].
    Tensor d = i == begin ? dx : Tensor(back[(steps.size() - 1 - s) % 2], c.in.with_batch(n));
    if (c.relu_fused > 0.0f)
      c.layer->backward_relu(in, grad, d, c.relu_fused, child_context(ctx, i));
    else
      c.layer->backward(in, Tensor(out[i], c.out.with_batch(n)), grad, d, child_context(ctx, i));
    grad = d;
  }
}

void Residual::backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                        const ExecContext& ctx) {
  ZT_ASSERT(ctx.kept, "a residual block backprops from what its training forward kept");
  const Layout l = layout(x.shape(), ctx.threads());
  std::vector<float*> out;
  for (size_t offset : l.kept) out.push_back(ctx.kept + offset);
  if (ctx.recompute_kept) {
    // The buffer holds another block's: the forward again, from the statistics it kept, leaving
    // the running ones alone (the step's forward moved them).
    ExecContext again = ctx;
    again.update_stats = false;
    again.stats_kept = ctx.stats != nullptr;
    run_children(x, out, again);
  }
  Tensor grad = dy;  // dL/d(main(x) + shortcut(x))
  if (post_) {
    grad = Tensor(ctx.workspace + l.post_grad, y.shape());
    post_->backward(y, y, dy, grad, ctx);
  }
  float* const back[2] = {ctx.workspace + l.back[0], ctx.workspace + l.back[1]};
  // The shortcut's dx goes straight into dx, main's into a ping-pong buffer added after.
  if (num_main_ == children_.size()) {
    if (!dx.empty()) dx.copy_from(grad);
  } else {
    backward_chain(num_main_, children_.size(), x, out, grad, dx, back, ctx);
  }
  Tensor main_dx = dx.empty() ? Tensor() : Tensor(back[0], x.shape());
  backward_chain(0, num_main_, x, out, grad, main_dx, back, ctx);
  if (!dx.empty()) add(dx, dx, main_dx, ctx);
}

// Tensors [first, first + count) of `all`; none when `all` is empty (nothing bound).
static std::vector<Tensor> slice(const std::vector<Tensor>& all, size_t first, size_t count) {
  if (all.empty()) return {};
  return std::vector<Tensor>(all.begin() + first, all.begin() + first + count);
}

void Residual::bind(std::vector<Tensor> params, std::vector<Tensor> grads) {
  Layer::bind(std::move(params), std::move(grads));
  for (const Child& c : children_) {
    const size_t count = c.layer->param_specs().size();
    c.layer->bind(slice(params_, c.first_param, count), slice(grads_, c.first_param, count));
  }
}

void Residual::bind_state(std::vector<Tensor> state) {
  Layer::bind_state(std::move(state));
  for (const Child& c : children_)
    c.layer->bind_state(slice(state_, c.first_state, c.layer->state_specs().size()));
}

}  // namespace zotrain
