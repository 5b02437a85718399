// The interface every layer implements, whatever it computes: shapes, parameters, the scratch
// it needs, forward and backward. Layers hold no buffers of their own: the Network binds their
// parameters and gradients (arena memory) and passes activations in and out.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "zotrain/core/tensor.h"
#include "zotrain/core/thread_pool.h"
#include "zotrain/kernels/pool.h"

namespace zotrain {

// How a parameter is initialized: uniform in ±1/sqrt(fan_in) (PyTorch's default for Linear and
// Conv2d), or a constant.
struct ParamSpec {
  std::string name;  // "weight", "bias"
  Shape shape;
  int64_t fan_in = 0;  // 0: constant init with `value`
  float value = 0.0f;
};

// Writes a perturbed pass's parameters into its scratch as a layer is about to read them
// (Network::run): rows [o0, o1) of the layer's parameter tensors [first, first + count) (rows:
// the tensors' first dimension), the whole tensors for o1 = 0. What it returns holds until the
// next call.
using ParamWriter =
    std::function<const Tensor*(size_t first, size_t count, int64_t o0, int64_t o1)>;

// What a layer may use while running: the thread pool (null = one thread), a scratch buffer
// of at least workspace_floats() floats, and, when not null, the parameter values to run
// forward with instead of the bound ones (a perturbed copy, for zeroth-order passes).
// A training pass (the default, as in PyTorch) normalizes by the batch's statistics and drops
// units; an evaluation pass uses the running statistics and keeps every unit. `key` draws the
// dropout masks: the Network gives every pass of one training step the same key per layer, so
// a step's perturbed passes and its backward see one mask. `update_stats`: this pass moves the
// running statistics (one pass per step).
struct ExecContext {
  ThreadPool* pool = nullptr;
  float* workspace = nullptr;
  const Tensor* params = nullptr;
  // In a perturbed pass, instead of params: the writer and the scratch's floats, which a layer
  // or its children fill one block of rows at a time (nn/perturbed_forward.h).
  const ParamWriter* write_params = nullptr;
  int64_t scratch_floats = 0;
  bool training = true;
  uint64_t key = 0;
  bool update_stats = false;
  // The layer's kept statistics (kept_stats_doubles), or null: what a training forward computes
  // from its input and its backward needs again (batch norm's per-channel mean and deviation).
  // A forward writes them; with stats_kept they already hold this input's (a backward, or a
  // residual block's recomputation), and the layer reads them instead of recomputing.
  double* stats = nullptr;
  bool stats_kept = false;
  // The layer's kept activations (kept_floats), or null: what a training forward of a head layer
  // writes besides its output for its backward to read (a residual block's inner outputs). With
  // recompute_kept the buffer is shared with other layers, and backward writes it again first.
  float* kept = nullptr;
  bool recompute_kept = false;
  int threads() const { return pool ? pool->size() : 1; }
};

class Layer {
 public:
  virtual ~Layer() = default;

  // A short description, e.g. "conv2d 1->6 k5 s1 p2".
  virtual std::string describe() const = 0;
  // Output shape for an input shape; both include the batch dimension.
  virtual Shape output_shape(const Shape& in) const = 0;
  virtual std::vector<ParamSpec> param_specs() const { return {}; }
  // Tensors that are part of the model but not trained by any optimizer (batch norm's running
  // statistics), initialized to their constant `value`.
  virtual std::vector<ParamSpec> state_specs() const { return {}; }
  // Scratch floats needed to run forward and backward on `in` with `threads` threads.
  virtual size_t workspace_floats(const Shape& in, int threads) const {
    (void)in, (void)threads;
    return 0;
  }
  // Scratch floats needed to run forward only (a body layer), when less than for backward.
  virtual size_t forward_workspace_floats(const Shape& in, int threads) const {
    return workspace_floats(in, threads);
  }
  // Whether backward needs the layer's output y (otherwise only its input x).
  virtual bool backward_needs_output() const { return false; }
  // Whether forward may write y over x (same storage); forward-only passes then need no
  // buffer of their own for the layer.
  virtual bool in_place() const { return false; }
  // A 2-D max pooling fused into forward: y = the maximum of each `pool` window of forward(x)'s
  // planes, computed a few images at a time so that the unpooled output stays in cache and
  // needs no buffer of the batch's size (a kMaxPooled node of nn/graph.h, forward-only passes). The
  // scratch it needs, in place of forward_workspace_floats; 0 where the layer has no such pass.
  virtual size_t max_pooled_workspace_floats(const Shape& in, const kernels::Pool2dGeometry& pool,
                                             int threads) const {
    (void)in, (void)pool, (void)threads;
    return 0;
  }
  // Called only where max_pooled_workspace_floats is not 0.
  virtual void forward_max_pooled(const Tensor& x, const kernels::Pool2dGeometry& pool, Tensor& y,
                                  const ExecContext& ctx) const {
    (void)x, (void)pool, (void)y, (void)ctx;
  }
  // Doubles of ExecContext::stats the layer keeps from a training forward for its backward (the
  // Network plans them for head layers); 0 for most layers.
  virtual size_t kept_stats_doubles(const Shape& in) const {
    (void)in;
    return 0;
  }
  // Floats of ExecContext::kept the layer keeps from a training forward for its backward
  // besides its output (the Network plans them for head layers, by batch); 0 for most layers.
  virtual size_t kept_floats(const Shape& in) const {
    (void)in;
    return 0;
  }
  // Whether the layer has forward_relu: forward with a ReLU (ReLU6: cap 6) fused in, writing y
  // once instead of twice (a kActivated node of nn/graph.h, where no backward pass reads the
  // layer's own output). It may run in place, y over x. And backward_relu, its backward pass.
  virtual bool fuses_relu() const { return false; }
  // y = min(max(forward(x), 0), cap), bit for bit; called only where fuses_relu().
  virtual void forward_relu(const Tensor& x, Tensor& y, float cap, const ExecContext& ctx) const {
    (void)x, (void)y, (void)cap, (void)ctx;
  }
  // backward through forward_relu from dy = dL/d(its output), bit for bit the ReLU's backward
  // and then the layer's, reading neither output (the ReLU's gate is recomputed from x);
  // called only where fuses_relu(), with x not overwritten.
  virtual void backward_relu(const Tensor& x, const Tensor& dy, Tensor& dx, float cap,
                             const ExecContext& ctx) {
    (void)x, (void)dy, (void)dx, (void)cap, (void)ctx;
  }
  // Output features that forward_rows computes in blocks, each block from just those rows of
  // every parameter tensor (the tensors' first dimension), so that a perturbed pass needs one
  // block's parameters at a time, not the layer's; 0 for layers that cannot (the default).
  virtual int64_t output_rows() const { return 0; }
  // The layers a composite layer (a residual block) runs, in order; empty for the others.
  virtual std::vector<const Layer*> children() const { return {}; }
  // forward's output features [o0, o1) only, written into their place in y, with ctx.params
  // holding rows [o0, o1) of each parameter; the same bits as forward's. Called only where
  // output_rows() > 0.
  virtual void forward_rows(const Tensor& x, Tensor& y, int64_t o0, int64_t o1,
                            const ExecContext& ctx) const {
    (void)x, (void)y, (void)o0, (void)o1, (void)ctx;
  }
  // Multiply-adds of one forward pass on `in`, for reports and benchmarks.
  virtual int64_t forward_macs(const Shape& in) const {
    (void)in;
    return 0;
  }

  // y = f(x). y has output_shape(x.shape()).
  virtual void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const = 0;
  // Given dy = dL/dy: adds dL/dparam into the bound gradients (when bound) and writes
  // dx = dL/dx (when dx is not empty).
  virtual void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                        const ExecContext& ctx) = 0;

  // Called by the Network: tensors in the order of param_specs(); grads may be empty. A layer
  // made of layers overrides bind and bind_state to hand each its share.
  virtual void bind(std::vector<Tensor> params, std::vector<Tensor> grads) {
    params_ = std::move(params);
    grads_ = std::move(grads);
  }
  const std::vector<Tensor>& params() const { return params_; }
  // Parameter i as forward must read it: ctx.params[i] when given, else the bound one.
  const Tensor& param(const ExecContext& ctx, int i) const {
    return ctx.params ? ctx.params[i] : params_[i];
  }
  const std::vector<Tensor>& grads() const { return grads_; }
  bool has_grads() const { return !grads_.empty(); }
  // Called by the Network: tensors in the order of state_specs().
  virtual void bind_state(std::vector<Tensor> state) { state_ = std::move(state); }
  const std::vector<Tensor>& state() const { return state_; }

 protected:
  std::vector<Tensor> params_, grads_, state_;
};

}  // namespace zotrain
