// The integer execution path of a layer (NITI): int8 activations and errors with one exponent per
// tensor, int32 accumulation, int64 weight-gradient sums. The layer description is the same
// LayerSpec the f32 path runs; int8 layers have weights only (NITI's have no bias).
// Integer arithmetic only: these files are also compiled with floating point disabled.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "zotrain/core/qtensor.h"
#include "zotrain/core/thread_pool.h"
#include "zotrain/kernels/pool.h"
#include "zotrain/nn/layer_spec.h"

namespace zotrain {

// Scratch a QLayer call may use, and when `weight` is set, the mantissas to run forward with
// instead of the bound weight (a perturbed copy, for zeroth-order passes; same exponent).
struct QExecContext {
  int32_t* acc = nullptr;  // at least acc_elems() accumulators, for each of pool's workers
  void* work = nullptr;    // at least work_bytes() bytes, for each of pool's workers
  const int8_t* weight = nullptr;
  int16_t* stage = nullptr;    // at least stage_elems() (see kernels::stage_s16)
  int32_t* ranges = nullptr;   // one per batch row
  bool training = true;        // as ExecContext's: dropout masks, keyed by `key`
  bool update_stats = false;   // a training pass that moves running statistics (batch norm)
  bool average_stats = false;  // and averages them over the updates instead (fixed weights)
  bool fixed_norm = false;     // batch norm divides by the deviation, not a power of two
  uint64_t key = 0;
  ThreadPool* pool = nullptr;  // splits row blocks (requantize_rows); null: one thread
  int64_t acc_stride = 0;      // worker w's accumulators start at acc + w * acc_stride
  int64_t work_stride = 0;     // and its scratch at work + w * work_stride bytes
  // A distributed run's rows apart (docs/distributed.md): the range of a tensor over every
  // rank's rows, from this rank's, so that every rank requantizes with the one shift of the
  // whole batch. Null: this process holds the whole batch.
  int (*all_ranks_range)(int range) = nullptr;
};

class QLayer {
 public:
  virtual ~QLayer() = default;
  // The weight's shape ([out, in] or [out_c, in_c, k, k]); rank 0 when the layer has none.
  virtual Shape weight_shape() const { return {}; }
  // Scratch of forward and backward for an input shape (batch included).
  virtual int64_t acc_elems(const Shape& in) const {
    (void)in;
    return 0;
  }
  // More scratch for the weight gradient (layers trained by backprop only).
  virtual int64_t grad_acc_elems() const { return 0; }
  virtual int64_t work_bytes(const Shape& in) const {
    (void)in;
    return 0;
  }
  // Of forward alone (layers trained without backprop).
  virtual int64_t forward_work_bytes(const Shape& in) const { return work_bytes(in); }
  // int16 staging of a whole output (or input error) for per-tensor exponents, rows computed one
  // at a time into acc_elems() int32 accumulators.
  virtual int64_t stage_elems(const Shape& in) const {
    (void)in;
    return 0;
  }
  // A max pooling fused into forward, as Layer::forward_max_pooled (QNetwork::forward, in
  // forward-only passes): y = the pooling of forward(x), bit for bit, with the unpooled output
  // existing for a block of rows at a time only. Its accumulators and staging, in place of
  // acc_elems and stage_elems; max_pooled_acc_elems is 0 where the layer has no such pass.
  virtual int64_t max_pooled_acc_elems(const Shape& in, const kernels::Pool2dGeometry& pool) const {
    (void)in, (void)pool;
    return 0;
  }
  virtual int64_t max_pooled_stage_elems(const Shape& in,
                                         const kernels::Pool2dGeometry& pool) const {
    (void)in, (void)pool;
    return 0;
  }
  virtual void forward_max_pooled(const QTensor& x, const kernels::Pool2dGeometry& pool, QTensor& y,
                                  const QExecContext& ctx) const {
    (void)x, (void)pool, (void)y, (void)ctx;
  }
  // Whether forward may write y over x, and whether backward reads y rather than x.
  virtual bool in_place() const { return false; }
  virtual bool backward_needs_output() const { return false; }

  // y = f(x), with y.shape set by the caller; sets y.exp.
  virtual void forward(const QTensor& x, QTensor& y, const QExecContext& ctx) const = 0;
  // From dy = dL/dy: writes dx (when dx.data is not null; dx may alias dy for layers that run in
  // place) and, for layers with a weight, adds dL/dW as exact integer sums into grad
  // (weight_shape() elements; the scale 2^(dy.exp + x.exp) is irrelevant to NITI's update).
  virtual void backward(const QTensor& x, const QTensor& y, const QTensor& dy, QTensor& dx,
                        int64_t* grad, const QExecContext& ctx) const = 0;

  // int32 state carried between steps (batch norm's running statistics), bound by the network,
  // set to its initial values by init_state and saved in checkpoints; 0 when the layer has none.
  virtual int64_t state_elems() const { return 0; }
  virtual void init_state(int32_t* state) const { (void)state; }
  // Whether `state` (read from a checkpoint) is one the layer can hold.
  virtual bool valid_state(const int32_t* state) const {
    (void)state;
    return true;
  }
  void bind_state(int32_t* state) { state_ = state; }

  void bind(QTensor weight) { weight_ = weight; }
  const QTensor& weight() const { return weight_; }
  QTensor& weight() { return weight_; }
  // The weight mantissas forward must read: ctx.weight when set, else the bound ones.
  const int8_t* weight_data(const QExecContext& ctx) const {
    return ctx.weight ? ctx.weight : weight_.data;
  }

 protected:
  QTensor weight_;
  int32_t* state_ = nullptr;
};

// The integer layer for `spec` on inputs of shape `in`; InputError for ops without an integer
// path.
std::unique_ptr<QLayer> make_qlayer(const LayerSpec& spec, const Shape& in);

}  // namespace zotrain
