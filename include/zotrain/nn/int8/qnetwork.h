// Runs a model's layer list on the integer path (NITI int8): the int8 counterpart of Network,
// with the same body/head split and its activations planned alike. The body runs forward only;
// the head keeps its int8 activations, backprops int8 errors and sums int64 weight gradients,
// which update_head() applies with NITI's bit-width rule W <- clip(W - g), |g| < 2^bits.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <vector>

#include "zotrain/core/arena.h"
#include "zotrain/core/function_ref.h"
#include "zotrain/core/memory_plan.h"
#include "zotrain/nn/int8/qlayer.h"
#include "zotrain/nn/network.h"

namespace zotrain {

struct ActivationPlan;

// One weight of the network, in the order of the layers.
struct QWeight {
  int layer;
  uint32_t tensor;  // the f32 model's parameter index of this weight (perturbation stream)
  QTensor value;
  int64_t* grad;  // null unless the layer is in the head
};

// A layer's int32 state (batch norm's running statistics), saved in checkpoints.
struct QState {
  int layer;
  int32_t* data;
  int64_t elems;
};

// Writes the mantissas a body weight takes during one forward pass into dst[begin, end) (elements
// of w.value's index space); the network splits a weight into ranges over its thread pool, so
// any split must give the same values.
using QWeightTransform =
    FunctionRef<void(const QWeight& w, int8_t* dst, int64_t begin, int64_t end)>;

class QNetwork {
 public:
  // Bits of room the classifier's initial mantissas leave to grow into in a network with batch
  // norm (qnetwork_init.cpp); 3 measured best of 0, 3 and 4 on PointNet (docs/reproduction.md).
  static constexpr int kClassifierHeadroomBits = 3;

  // Builds the integer layers of `desc` (which supplies shapes and the body/head arithmetic);
  // InputError for layers without an integer path. desc must outlive the QNetwork.
  explicit QNetwork(const Network& desc);

  int num_layers() const { return desc_.num_layers(); }
  const Network& desc() const { return desc_; }

  // `threads` workers each get their own accumulators and kernel scratch.
  MemoryPlan plan(int64_t batch, int head_start, int threads = 1) const;
  // Allocates the plan's buffers and initializes the weights: the f32 model's initial values
  // (same seed, same streams) quantized to int8. The layers split their row blocks over `pool`
  // (null: one thread).
  void allocate(Arena& arena, int64_t batch, int head_start, uint64_t seed,
                ThreadPool* pool = nullptr);

  int64_t batch() const { return batch_; }
  int head() const { return head_; }
  // The int8 input buffer, first `rows` rows; its exponent is set by the caller.
  QTensor& input() { return input_; }
  // The mode of the passes that follow (as Network's; batch statistics do not apply).
  void set_mode(const PassMode& mode) { mode_ = mode; }
  const PassMode& mode() const { return mode_; }
  // Passes on this rank's rows of a batch spread over ranks (QExecContext::all_ranks_range);
  // null: the whole batch here.
  void set_all_ranks_range(int (*range)(int)) { all_ranks_range_ = range; }
  // Batch norm divides each channel by its standard deviation in fixed point instead of the
  // power of two nearest it (QExecContext::fixed_norm).
  void set_fixed_norm(bool fixed) { fixed_norm_ = fixed; }
  // Runs all layers on the first `rows` input rows; returns the int8 logits [rows, classes].
  QTensor forward(int64_t rows, const QWeightTransform* body = nullptr);
  // Backprop from int8 dL/dlogits through the head, adding into the head's int64 gradients.
  void backward(const QTensor& dlogits);
  QTensor logits_grad(int64_t rows) const { return dlogits_.rows(0, rows); }
  void zero_grad();
  // W <- clip(W - g) for every head weight, g its gradient shifted to at most `bits` bits with
  // pseudo-stochastic rounding.
  void update_head(int bits);

  // int32 scratch of accumulator_elems() elements, free between passes: at least the largest
  // body weight's size or kUpdateChunk, whichever is smaller.
  int32_t* accumulators() { return acc_; }
  int64_t accumulator_elems() const { return acc_elems_; }
  static constexpr int64_t kUpdateChunk = 4096;

  std::vector<QWeight>& weights() { return weights_; }
  const std::vector<QWeight>& weights() const { return weights_; }
  const std::vector<QState>& states() const { return states_; }
  // Sets the running statistics of every layer with state (batch norm) to the mean of their
  // batch statistics over `batches` training passes of the weights as they are ("precise batch
  // norm"): fill(b) loads batch b into input() and returns its rows. No-op without such layers.
  void average_stats(int64_t batches, const std::function<int64_t(int64_t)>& fill);
  const QLayer& layer(int i) const { return *layers_[static_cast<size_t>(i)]; }

 private:
  struct Workspace {
    int64_t acc = 0, stage = 0, work = 0, scratch = 0;
  };
  Graph fusions(int head_start) const;
  ActivationPlan activations(int64_t batch, int head_start, const Graph& fused) const;
  Workspace workspace(int64_t batch, int head_start, const Graph& fused) const;
  // Fills plan rows and, when `arena` is given, allocates and binds them.
  MemoryPlan layout(int64_t batch, int head_start, int threads, Arena* arena);
  QTensor output_buffer(int i, int64_t rows);
  QExecContext context(int layer) const;
  void init_weights(uint64_t seed);  // qnetwork_init.cpp: floats, at setup only

  const Network& desc_;
  std::vector<std::unique_ptr<QLayer>> layers_;
  int64_t batch_ = 0;
  int head_ = 0;
  std::vector<QWeight> weights_;
  std::vector<QState> states_;
  QTensor input_, dlogits_;
  // Each layer's output (null inside a fused group) and its exponent, valid while it lives
  // (activation_plan.h).
  std::vector<QTensor> kept_;
  Graph fused_;  // the graph fused for the body (fusions)
  std::array<int8_t*, 2> back_{};
  int8_t* scratch_ = nullptr;  // one body layer's transformed weights
  int32_t* acc_ = nullptr;
  int16_t* stage_ = nullptr;
  int32_t* ranges_ = nullptr;
  void* work_ = nullptr;
  int64_t acc_stride_ = 0, work_stride_ = 0;  // per worker, in elements and bytes
  int64_t acc_elems_ = 0;                     // of all workers
  ThreadPool* pool_ = nullptr;
  PassMode mode_;
  bool averaging_ = false;  // inside average_stats
  int (*all_ranks_range_)(int) = nullptr;
  bool fixed_norm_ = false;
};

// The int8 input of a normalized pixel p, (p / 255 - mean) / std = lut[p] · 2^exp, with exp
// fixed by the largest magnitude any pixel can take, so batches need no range estimate.
struct InputQuantizer {
  std::array<int8_t, 256> lut{};
  int exp = 0;
};
InputQuantizer input_quantizer(float mean, float std);

}  // namespace zotrain
