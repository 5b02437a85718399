// A trained f32 Network run as an INT8 NPU runs it (the QScheduler paper's setting): batch norms
// folded into the convolution or linear layer before them, ReLU/ReLU6 into the clamp of their
// producer, per-tensor symmetric scales calibrated on warm-up batches and then fixed, int8
// operands with int32 accumulation and fixed-point requantization (kernels/npu.h).
//
// The host keeps float master weights of every layer with weights (BN folded in) and
// re-quantizes them with their fixed scale after each update; zeroth-order perturbations are
// ±1 (or 0) in integer space on the quantized weights, drawn exactly as zo::perturbation draws
// them for the weight's Network parameter index, so the host replays them by seed.
//
// A pass may start at a top-level layer from the kept output of the one before it (the
// unperturbed prefix of a ZO step runs once). The int8 tensors share one block, placed by their
// lifetimes (core/memory_planner.h): those a later pass reads (the input, the logits, the
// output before the layer passes start at) live to the end, the others only from the node that
// writes them to the last that reads them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/npu.h"
#include "zotrain/core/arena.h"
#include "zotrain/core/memory_plan.h"
#include "zotrain/core/tensor.h"
#include "zotrain/core/thread_pool.h"
#include "zotrain/nn/network.h"

namespace zotrain {

// One trained weight tensor on the host.
struct NpuParam {
  int layer;         // index of the top-level layer in the f32 Network it came from
  int param_index;   // index of that weight in Network::params() (the ZO tensor id)
  Tensor master;     // float master weights (BN folded in), in the NpuNetwork's arena
  float scale;       // fixed per-tensor weight scale S_w (max|W|/127 at calibration)
  std::string norm;  // the batch norm folded in ("4.main.1"), or empty
};

class NpuNetwork {
 public:
  // The int8 program of `net` (allocated: parameters and batch-norm running statistics set) for
  // batches of up to `batch` rows. InputError naming the layer for what it cannot run (a batch
  // norm after anything but a convolution or linear layer). The int8 passes split their rows over
  // `pool` (null: one thread); every row's result is the same whichever worker computes it.
  // Then plan() tells the buffers it takes and allocate() takes them: nothing runs before.
  // `start` is the one top-level layer > 0 passes may start at (forward's from, forward_prefix's
  // to), or 0 for none; -1 keeps every layer's output so that a pass may start anywhere.
  NpuNetwork(const Network& net, int64_t batch, ThreadPool* pool = nullptr, int start = -1);

  // The program's buffers on `threads` workers: int8 tensors, scratch, quantized weights and
  // int32 biases, float master weights and folded biases, the dequantized logits. The float
  // reference (float_forward) keeps its values only for the duration of a call.
  MemoryPlan plan(int threads) const;
  // Takes plan(pool's size) from `arena`, which must outlive the network.
  void allocate(Arena& arena);

  // Float reference of the folded program on `rows` rows of f32 input x (evaluation semantics);
  // returns the logits [rows, classes] (a new tensor; rows may exceed the program's batch). With
  // `observe`, records the largest |value| of the input and of every tensor the int8 program
  // quantizes (a running maximum over calls): the calibration passes.
  Tensor float_forward(const float* x, int64_t rows, bool observe);
  // Fixes every scale from the observed ranges (activations max/127, weights max|W|/127 per
  // tensor, biases int32 at s_in * s_w, requantization multipliers) and quantizes every weight.
  // Calling it again after more observed passes recalibrates; something must have been observed.
  void calibrate();
  // Forgets the observed ranges (before a recalibration).
  void reset_observations();
  // The fixed scales (every tensor's, then every weight's), as a checkpoint keeps them, and
  // back: set_scales(scales()) on a network of the same model gives the same program as the
  // calibration did, without observing anything.
  std::vector<float> scales() const;
  size_t num_scales() const;
  void set_scales(const std::vector<float>& scales);
  bool calibrated() const { return calibrated_; }

  // All layers with weights, in Network::params() order; biases stay fixed in int32.
  std::vector<NpuParam>& params() { return params_; }
  const std::vector<NpuParam>& params() const { return params_; }
  // The float bias of params()[i] with its batch norm folded in (empty when it has neither).
  std::span<const float> folded_bias(size_t i) const { return nodes_[param_node_[i]].bias; }
  // master -> int8 with the fixed scale, clamped to ±127. p must be one of params().
  void requantize(const NpuParam& p);
  // The int8 weights of params()[i] as the next unperturbed forward reads them.
  std::span<const int8_t> quantized(size_t i) const;

  // Quantizes `rows` rows of f32 input into the program's int8 input buffer (input scale).
  void set_input(const float* x, int64_t rows);

  // A perturbation of every int8 weight of top-level layers >= first_layer: w + sign * z_i,
  // clamped to ±127, z_i = zo::perturbation({Rademacher, p_zero}, seed, param_index, i).
  struct Perturb {
    uint64_t seed;
    int sign;
    float p_zero;
    int first_layer;
  };
  // Runs top-level layers [from, num_layers) in int8 on `rows` rows: from == 0 reads the input
  // buffer, from > 0 the kept output of layer from - 1 of an earlier forward(rows, 0, ..) or
  // forward_prefix. Returns the dequantized logits [rows, classes] (valid until the next call).
  // It must be calibrated, sign ±1 and, for from > 0, rows that pass's rows with the kept output
  // current: not perturbed, and no set_input, calibrate or requantize of a layer before `from`
  // since. Misuse of this API (here or in any method) is a bug: ZT_ASSERT, a RuntimeError.
  Tensor forward(int64_t rows, int from, const Perturb* perturb);
  // Runs layers [0, to) only, keeping the output of layer to - 1 for forward(rows, to, ..).
  void forward_prefix(int64_t rows, int to);
  // The kept int8 output of layer to - 1 (0 < to <= num_layers()), `numel` values a row: read
  // it after forward_prefix, or write features computed before (a cache), which makes it the
  // current output for forward(rows, to, ..).
  int64_t prefix_numel(int to) const;
  const int8_t* prefix_output(int to) const;
  void set_prefix_output(int to, const int8_t* x, int64_t rows);

  int num_layers() const { return num_layers_; }
  // Scale of the input and of the logits (fixed by calibrate).
  float input_scale() const;
  float output_scale() const;
  // The bytes of plan() for this network's threads (for memory reports).
  size_t bytes() const;

 private:
  enum class Kind { kConv, kMaxPool, kAvgPool, kGlobalMax, kGlobalAvg, kClamp, kAdd };
  enum class Act { kNone, kReLU, kReLU6 };
  static Act activation(Op op);  // of a ReLU or ReLU6
  // One tensor of the program: [batch, c, h, w] (h = w = 1 for features).
  struct Value {
    int64_t c = 0, h = 1, w = 1;
    double observed = 0;  // largest |value| seen by float_forward
    float scale = 0;
    bool keeps_scale = false;  // max pooling, clamps: the input's scale
    std::span<int8_t> q;       // [batch, c, h, w] in the arena
    std::vector<float> f;      // float_forward's values
    int64_t numel() const { return c * h * w; }
  };
  struct Node {
    Kind kind;
    int layer;  // top-level layer index
    int in, in2 = -1, out;
    Act act = Act::kNone;
    kernels::NpuConvGeometry geom{};  // conv; pools: kernel, stride
    int param = -1;                   // conv: index into params_
    std::vector<float> bias_init;     // conv: the folded float bias until allocate()
    std::span<float> bias;            // conv: folded float bias (empty when none)
    std::span<int32_t> qbias;
    std::span<int8_t> qweight;
    int64_t weights = 0;
    kernels::FixedMultiplier mult{}, mult2{};
    int32_t lo = -127, hi = 127;
    // conv: the max pooling node right after it, when that is the only reader of its output
    // and the output is not kept, and that pooling's windows: the convolution may then write
    // the pooling's output itself (kernels::conv_s8_pools decides, once the multiplier is
    // known). -1: none.
    int pool = -1;
    kernels::Pool2dGeometry windows{};
  };

  struct Slot;
  std::vector<Slot> slots(int threads) const;
  // Adds the nodes of `specs` (lowered: `lowered`; the layers of top-level layer `layer` with
  // parameter names prefixed `prefix`) reading value `in`; returns the value of the chain's
  // output.
  int build_chain(const Network& net, const std::vector<LayerSpec>& specs, const Graph& lowered,
                  int layer, const std::string& prefix, int in, bool top);
  // Node n (kind, input, layer set) as the convolution or linear layer `s` named `name`, with
  // the batch norm named `norm` folded in (empty: none): its master weights and folded bias.
  void add_weighted(const Network& net, const LayerSpec& s, const std::string& name,
                    const std::string& norm, Node& n);
  int add_value(int64_t c, int64_t h, int64_t w);
  void float_node(Node& n, int64_t rows);
  // With `pooled`, a convolution writes the output of its Node::pool.
  void int8_node(const Node& n, int64_t rows, const int8_t* weight, bool pooled = false);
  // The node on rows [r0, r1), with one worker's scratch.
  void int8_node_rows(const Node& n, int64_t r0, int64_t r1, const int8_t* weight, int8_t* work,
                      bool pooled);
  // Whether a later pass reads value v (the input, the logits, a kept layer output).
  bool kept_value(int v) const;
  // Sets each convolution's Node::pool and its windows.
  void find_pooled_convolutions();
  const int8_t* weights_for(const Node& n, const Perturb* perturb);
  void run(int64_t rows, int from, int to, const Perturb* perturb);
  void check_rows(int64_t rows, const char* what) const;
  void quantize_param(size_t i);
  // Places the int8 tensors in one block by their lifetimes (value_offset_).
  void plan_values();
  // Whether passes may start at top-level layer `to` (its input is kept).
  bool keeps(int to) const;
  // Everything that follows from the scales: requantization multipliers, clamps, int32 biases,
  // quantized weights.
  void apply_scales();

  int64_t batch_;
  int num_layers_;
  std::vector<Value> values_;  // values_[0]: the input
  std::vector<Node> nodes_;
  std::vector<int> layer_out_;  // value holding top-level layer i's output
  std::vector<NpuParam> params_;
  std::vector<int> param_node_;
  int observed_passes_ = 0;
  bool calibrated_ = false, allocated_ = false;
  // Validity of the kept int8 tensors: rows of the input buffer; rows of the last pass from the
  // input and the layers [0, clean_to_) whose kept outputs are unperturbed and current.
  int start_ = -1;
  std::vector<size_t> value_offset_;  // each int8 tensor's offset in the block of values_bytes_
  size_t values_bytes_ = 0;
  int64_t input_rows_ = 0, kept_rows_ = 0;
  int clean_to_ = 0;
  int64_t classes_ = 0;
  std::span<int8_t> work_, wscratch_;  // work_: one slice of work_stride_ bytes per worker
  int64_t work_stride_ = 0, max_weights_ = 0;
  ThreadPool* pool_ = nullptr;
  Tensor logits_;
};

}  // namespace zotrain
