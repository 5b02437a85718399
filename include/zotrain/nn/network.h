// Runs a list of layer descriptions: the one execution interface the trainer talks to.
// The layers are split at `head_start`: layers before it (the body) run forward only; layers
// from it on (the head) keep their activations for backprop (one block placed by lifetime:
// src/nn/activation_plan.h).
// head_start = 0 is Full BP, head_start = num_layers() is Full ZO.
// Fine-tuning may also freeze the layers before `frozen` (<= head_start): they run in evaluation
// mode, their parameters are never perturbed, and their output is kept so that the passes of a
// step run them once (forward_frozen) and only the trained layers again (forward_trained).
// Perturbation lanes (allocate's `lanes`) let several zeroth-order passes run their body at
// once, one per worker of the pool, each with forward buffers of its own (forward_lanes).
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "zotrain/core/arena.h"
#include "zotrain/core/memory_plan.h"
#include "zotrain/nn/graph.h"
#include "zotrain/nn/layer.h"
#include "zotrain/nn/layer_spec.h"

namespace zotrain {

struct ActivationPlan;
// One parameter tensor of the network, in a fixed order (layer, then the layer's param_specs).
struct ParamRef {
  int layer;
  int index;         // position among all parameters of the network
  std::string name;  // "3.weight"
  Tensor value;
  Tensor grad;  // empty unless the layer is in the head
};

// Writes the values elements [begin, end) of a body parameter (p.value's index space) take
// during one forward pass into dst[0, end - begin): the zeroth-order perturbation θ + εz.
using ParamTransform =
    std::function<void(const ParamRef& p, float* dst, int64_t begin, int64_t end)>;

// Called in a pass on one layer's output before its activation, with the layer's input; it may
// change y (activity perturbation: zo/activity.h).
using OutputTap = std::function<void(const Tensor& x, Tensor& y)>;

// How the next passes run (see ExecContext): training or evaluation, the key of the step's
// dropout masks, and whether the pass moves batch norm's running statistics.
struct PassMode {
  bool training = true;
  uint64_t key = 0;
  bool update_stats = false;
};

// The dropout key of layer `layer` in a pass keyed `key`: distinct per layer (the f32 and int8
// networks derive it alike, so their masks agree).
inline uint64_t layer_key(uint64_t key, int layer) {
  return key ^ (static_cast<uint64_t>(layer + 1) << 48);
}

class Network {
 public:
  // item_shape: one input example, e.g. {1, 28, 28}.
  Network(const Shape& item_shape, const std::vector<LayerSpec>& specs);

  int num_layers() const { return static_cast<int>(layers_.size()); }
  Layer& layer(int i) { return *layers_[i]; }
  const Layer& layer(int i) const { return *layers_[i]; }
  const LayerSpec& spec(int i) const { return specs_[i]; }
  const Shape& item_shape() const { return item_shape_; }
  // Shape of layer i's input (i = num_layers(): the logits) for a batch.
  Shape input_shape(int i, int64_t batch) const { return shapes_[i].with_batch(batch); }
  int64_t num_classes() const { return shapes_.back()[1]; }
  // Indices of the layers that have parameters.
  std::vector<int> param_layers() const;
  // The first layer of a head made of the last `bp_layers` layers with parameters (and what
  // follows them): num_layers() for 0, 0 for all of them.
  int head_start(int bp_layers) const;
  // The windows of the max pooling layer j (a MaxPool2d).
  kernels::Pool2dGeometry pool_windows(int j) const;
  // The model lowered (nn/graph.h): every layer a node of its own, before any fusion.
  const Graph& graph() const { return graph_; }
  // Multiply-adds of one forward pass of layers [from, num_layers()) on a batch (Layer::
  // forward_macs: convolutions and linear layers, plus batch norm and average pooling).
  int64_t forward_macs(int64_t batch, int from = 0) const;

  // The buffers allocate() will take for a batch size, split, thread count, frozen prefix,
  // number of perturbation lanes, paired passes and recomputation.
  MemoryPlan plan(int64_t batch, int head_start, int threads, int frozen = 0, int lanes = 1,
                  bool paired = false, bool recompute_blocks = false) const;
  // What inference of a batch takes: Full ZO's plan without the perturbed parameters.
  MemoryPlan inference_plan(int64_t batch, int threads) const;
  // Allocates the plan's buffers from `arena` and initializes the parameters from `seed`.
  // pool may be null (one thread); it must outlive the network's use. lanes > 1 needs a pool
  // and a trained body (frozen < head_start); each lane past the first adds forward buffers
  // (its trained body's activations, workspace, perturbed parameters) sized for one thread.
  // `paired` (lanes = 1, a trained body) adds the activations of forward_pair's second pass.
  // `recompute_blocks`: the head's residual blocks share one buffer for their inner activations
  // and recompute them in backward (one block forward more per backward) instead of keeping
  // their own.
  void allocate(Arena& arena, int64_t batch, int head_start, ThreadPool* pool, uint64_t seed,
                int frozen = 0, int lanes = 1, bool paired = false, bool recompute_blocks = false);
  // Only the parameters, the state and the input buffer, for a network another engine runs
  // (int8-npu folds its parameters into its own program); it cannot run passes itself.
  MemoryPlan parameter_plan(int64_t batch) const;
  void allocate_parameters(Arena& arena, int64_t batch, uint64_t seed);

  int64_t batch() const { return batch_; }
  int head() const { return head_start_; }
  int frozen() const { return frozen_; }
  // The input buffer, first `rows` rows: fill it, then call forward(rows).
  Tensor input(int64_t rows) const { return input_.rows(0, rows); }
  // Runs all layers on the first `rows` rows of the input; returns the logits [rows, classes].
  // With `body`, the body's layers read their parameters as `body` writes them into a scratch
  // buffer of one layer's size; the parameters themselves are never modified.
  Tensor forward(int64_t rows, const ParamTransform* body = nullptr);
  // forward() in two parts: the frozen layers on the input (once per batch), then the others
  // on the kept output of the frozen layers (as often as the step needs).
  void forward_frozen(int64_t rows);
  Tensor forward_trained(int64_t rows, const ParamTransform* body = nullptr);
  // forward_trained (unperturbed) with `tap` on the output of trained body layer `layer`, a
  // layer that runs alone or fused with its activation only (a linear layer): it runs apart
  // from its activation here, so the tap sees its output before the activation.
  Tensor forward_trained_tapped(int64_t rows, int layer, const OutputTap& tap);
  // The trained body layers [frozen(), head()) of body.size() <= lanes() passes at once: pass k
  // reads its parameters through body[k] and runs on one worker, in lane k's buffers. Returns
  // each pass's body output (the logits in Full ZO), valid until the next pass; the values are
  // those of forward_trained, bit for bit. Only pass 0 may move batch norm's statistics.
  std::vector<Tensor> forward_lanes(int64_t rows, const std::vector<const ParamTransform*>& body);
  // Two passes of the trained body taking turns layer by layer, on the whole pool: for each
  // layer, `first` writes its parameters and the first pass runs it, then `second` and the
  // second pass. So `second` may reuse what `first` computed for the same layer (the
  // perturbation z of a ±z pair, drawn once). Each pass's body output, as forward_lanes gives
  // them (bit for bit forward_trained's); only the first moves batch norm's statistics. Needs
  // allocate(..., paired = true).
  std::array<Tensor, 2> forward_pair(int64_t rows, const ParamTransform* first,
                                     const ParamTransform* second);
  // The head [head(), num_layers()) on a body output of forward_lanes or forward_pair, as
  // forward_trained runs it (so backward() may follow); returns the logits.
  Tensor forward_head(const Tensor& body_output);
  int lanes() const { return static_cast<int>(lanes_.size()); }
  // The kept output of the frozen layers (frozen() > 0), first `rows` rows: forward_frozen
  // writes it, forward_trained reads it, a caller may fill it with features computed before.
  Tensor frozen_output(int64_t rows) const { return kept_[frozen_ - 1].rows(0, rows); }
  // The mode of the passes that follow (training, key 0, no statistics update until set). Each
  // layer's dropout key is derived from mode.key and the layer's index.
  void set_mode(const PassMode& mode) { mode_ = mode; }
  const PassMode& mode() const { return mode_; }
  // Backprop through the head from dL/dlogits (rows as in the last forward), adding into the
  // head's parameter gradients.
  void backward(const Tensor& dlogits);
  // The buffer the caller writes dL/dlogits into, first `rows` rows.
  Tensor logits_grad(int64_t rows) const { return dlogits_.rows(0, rows); }
  void zero_grad();

  std::vector<ParamRef>& params() { return params_; }
  const std::vector<ParamRef>& params() const { return params_; }
  // The layers' state tensors (Layer::state_specs), named like parameters ("4.running_mean");
  // grad is always empty.
  std::vector<ParamRef>& state() { return state_; }
  const std::vector<ParamRef>& state() const { return state_; }
  int64_t num_param_elements() const;

  // The layers a forward-only pass runs as one: the graph fused for a split (network.cpp),
  // only in the body, never across the frozen layers' kept output.
  Graph fusions(int head_start, int frozen) const;
  // The trained body's layer [frozen, head_start) with the most parameter elements, and their
  // count ({-1, 0} without one): the size of one layer's perturbed parameters, or its z.
  std::pair<int, int64_t> largest_trained_layer(int head_start, int frozen) const;

 private:
  // The buffers one forward pass writes, and the threads it runs on: lane 0 holds the
  // network's own buffers and runs on the pool; the others run on one worker each.
  struct Lane {
    std::vector<float*> out;  // where each layer writes its output (null: inside a group)
    Tensor workspace;
    Tensor scratch;  // one body layer's transformed parameters
    ThreadPool* pool = nullptr;
    bool update_stats = true;  // whether mode().update_stats applies to this lane's passes
  };
  Tensor output_buffer(int i, int64_t rows, Lane& lane) const;
  // Runs layers [from, to) on x (the input of layer `from`) in `lane`; returns the output of
  // layer to-1.
  Tensor run(Tensor x, int from, int to, const ParamTransform* body, Lane& lane);
  ExecContext context(int layer, Lane& lane);
  Tensor trained_input(int64_t rows) const;
  void allocate(Arena& arena, int64_t batch, int head_start, ThreadPool* pool, uint64_t seed,
                int frozen, int lanes, bool paired, bool recompute_blocks, bool passes);
  void fuse(int head_start, int frozen);
  void bind_activations(const ActivationPlan& a, float* block, int lane);
  void bind_layers();

  Shape item_shape_;
  std::vector<LayerSpec> specs_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<Shape> shapes_;  // shapes_[i]: input of layer i with batch 1; back(): logits
  int64_t batch_ = 0;
  bool runs_ = true;  // allocated with the buffers of passes (not allocate_parameters)
  int head_start_ = 0;
  int frozen_ = 0;
  std::vector<ParamRef> params_, state_;
  PassMode mode_;
  Tensor input_, dlogits_;
  std::vector<Tensor> kept_;    // kept_[i]: lane 0's output of layer i (valid while it lives)
  std::vector<double*> stats_;  // stats_[i]: head layer i's kept statistics, or null
  // kept_floats_[i]: head layer i's kept activations (Layer::kept_floats), or null; with
  // recompute_blocks_, one buffer the head's residual blocks share.
  std::vector<float*> kept_floats_;
  bool recompute_blocks_ = false;
  Graph graph_;  // lowered once
  Graph fused_;  // graph_ fused for the split of the allocation: forward-only passes run it
  // Backprop: at a max pooling after a ReLU of the head, the ReLU's cap (0 elsewhere); one
  // pass routes dy through both to the ReLU's input.
  std::vector<float> relu_before_pool_;
  // Backprop: at a ReLU of the head after a layer that fuses it (batch norm), the ReLU's cap (0
  // elsewhere); one pass gates dy and backprops the layer.
  std::vector<float> relu_after_norm_;
  std::vector<Lane> lanes_;  // lanes_[0]: the network's own forward buffers
  Lane paired_;              // forward_pair's second pass: lane 0's but its own body outputs
  Tensor back_[2];           // backward: dx of the head's layers past its first, alternating
  int tap_layer_ = -1;       // forward_trained_tapped's layer and tap, during its pass
  const OutputTap* tap_ = nullptr;
};

}  // namespace zotrain
