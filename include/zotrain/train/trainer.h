// The training loop: data, model, optimizer, evaluation, metrics, checkpoints.
// Output folder (config.out): metrics.jsonl (one line per epoch), summary.json (at the end),
// checkpoint.bin (after every epoch, atomically).
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "zotrain/core/arena.h"
#include "zotrain/core/memory_plan.h"
#include "zotrain/core/thread_pool.h"
#include "zotrain/data/batcher.h"
#include "zotrain/data/registry.h"
#include "zotrain/models/model.h"
#include "zotrain/nn/int8/qnetwork.h"
#include "zotrain/nn/network.h"
#include "zotrain/nn/npu/npu_network.h"
#include "zotrain/train/checkpoint.h"
#include "zotrain/train/config.h"
#include "zotrain/train/feature_cache.h"
#include "zotrain/train/int8_step.h"
#include "zotrain/train/q_scheduler.h"
#include "zotrain/train/run_data.h"
#include "zotrain/train/sgd.h"
#include "zotrain/zo/estimator.h"

namespace zotrain {

struct EpochReport {
  int epoch = 0;  // 1-based
  int epochs = 0;
  double lr = 0, train_loss = 0, train_acc = 0, val_acc = 0, test_acc = 0;
  double seconds = 0;  // training time so far, evaluation excluded
  int64_t forward_passes = 0, backward_passes = 0;
  size_t arena_bytes = 0, peak_rss_bytes = 0;
};

struct TrainCallbacks {
  std::function<void(int epoch, int64_t batch, int64_t batches, double loss)> on_batch;
  std::function<void(const EpochReport&)> on_epoch;
};

// Accuracy of `net` on every batch of `batches` (at most the network's batch size each), forward
// passes in evaluation mode; the int8 inputs have exponent `input_exp`. With `features`, the
// batches hold the frozen layers' output (a FeatureSource) and only the others run.
double evaluate(Network& net, BatchSource& batches, bool features = false);
double evaluate(QNetwork& net, BatchSource& batches, int input_exp);

// The weights of an int8 network as checkpoint tensors ("qweight/<layer>" holding the mantissas,
// "qexp/<layer>" the exponent), and back (InputError naming the file for a missing tensor or a
// mantissa out of range).
std::vector<std::pair<std::string, Tensor>> int8_weight_tensors(const QNetwork& net);
void restore_int8_weights(const Checkpoint& ckpt, QNetwork& net);
// The weights of an f32 checkpoint quantized into an int8 network (biases are dropped: the
// integer layers have none).
void quantize_weights_from(const Checkpoint& ckpt, QNetwork& net);

// The memory a run takes: the network's plan plus optimizer state and labels (the plan of the
// integer network for precision int8).
MemoryPlan training_plan(const Network& net, const TrainConfig& cfg, int head_start);

// The first layer a run trains: 0, or for train_layers N the first of the last N layers with
// parameters (Network::head_start).
int frozen_layers(const Network& net, const TrainConfig& cfg);

// Where the body/head split of a run lies (Network::head_start): the first trained layer for
// bp, num_layers() for
// zo, and for elastic the last cfg.bp_layers layers with parameters — or, with a memory
// budget, the largest head whose training_plan fits (InputError when not even Full ZO fits).
int choose_head(const Network& net, const TrainConfig& cfg);

class Trainer {
 public:
  // Loads the data, builds and initializes the model; InputError for bad config or data.
  explicit Trainer(const TrainConfig& cfg);
  // The same on data the caller provides (generated data, benchmarks); cfg.data is a label.
  Trainer(const TrainConfig& cfg, RunData data);
  // Continues from a checkpoint written by a run with the same config (epochs may grow).
  void resume(const Checkpoint& ckpt);
  // Trains up to cfg.epochs, writing the output folder.
  void run(const TrainCallbacks& callbacks = {});

  const TrainConfig& config() const { return cfg_; }
  Network& network() { return *net_; }
  const Network& network() const { return *net_; }
  // The integer network of a precision int8 run (else null).
  QNetwork* int8_network() { return qnet_.get(); }
  // The NPU-style int8 program of a precision int8-npu run, calibrated (else null).
  NpuNetwork* npu_network() { return npu_.get(); }
  const Arena& arena() const { return arena_; }
  const MemoryPlan& plan() const { return plan_; }
  const TrainState& state() const { return state_; }
  const RunData& data() const { return data_; }
  // Layers with parameters trained by backprop.
  int bp_layers() const;
  // The first trained layer (0 unless train_layers freezes a prefix).
  int first_trained_layer() const { return frozen_; }
  // The first layer trained by backprop (Network::head_start): num_layers() when none is.
  int head() const { return head_; }
  // ZO samples per step in the current epoch (fixed, or the q schedule's).
  int q() const;

  struct StepResult {
    double loss = 0;
    int64_t correct = 0;
    int64_t signs = 0, zero_signs = 0, agree = 0;  // int8 ZO: see int8::StepResult
  };
  // One optimizer step (of the run's method) on the first `rows` rows of the network's input
  // buffer and labels(), with the learning rates and sparsity of `epoch` (0-based).
  StepResult step(int64_t rows, int epoch);
  uint8_t* labels() { return labels_; }
  // Copies batch `index` of the source's epoch into the input buffer (f32 or int8).
  int64_t fill_input(const BatchSource& batches, int64_t index);

 private:
  // The BP and ZO learning rates of a 0-based epoch (step decay).
  std::pair<double, double> learning_rates(int epoch) const;
  StepResult bp_step(int64_t rows, double lr);
  StepResult int8_step(int64_t rows, int epoch);
  // int8-npu: the q ±1 integer perturbation pairs on the NPU-style net, the update on the host's
  // master weights, re-quantized with their fixed scales.
  StepResult npu_step(int64_t rows, double zo_lr, int epoch);
  // int8-npu: observes the float program on the first npu_calibration_batches training batches
  // and fixes the scales.
  void calibrate_npu();
  double evaluate_npu(BatchSource& batches, bool features);
  double evaluate_on(Split split);
  // With cache_features: the frozen layers' output of every example of each split.
  void cache_features();
  // A split's batches: cached features when there are, else the data's.
  std::unique_ptr<BatchSource> source(Split split, bool train) const;
  // Copies batch `index` of a FeatureSource into the frozen layers' output.
  int64_t fill_features(const BatchSource& features, int64_t index);
  StepResult zo_step(int64_t rows, double lr, double zo_lr, int epoch);
  // The loss of one forward pass; with `head_weight` > 0 also backprops the head, scaling
  // dL/dlogits by head_weight.
  double pass(int64_t rows, const ParamTransform* body, double head_weight, int64_t* correct);
  // The losses of the step's perturbed passes (each as pass() gives it) in loss[0..n): up to
  // cfg.zo_lanes passes at a time run their body at once (Network::forward_lanes).
  void perturbed_passes(int64_t rows, const std::vector<ParamTransform>& body, double head_weight,
                        int64_t* correct, double* loss);
  // The loss of the logits of a pass; with `head_weight` > 0 also backprops the head.
  double finish_pass(const Tensor& logits, double head_weight, int64_t* correct);
  std::vector<std::pair<std::string, Tensor>> zo_state() const;
  // The NPU weights the run trains: those of the layers after the frozen ones.
  std::vector<NpuParam*> trained_npu_params() const;
  void write_summary() const;
  // Loads cfg.init's parameters (InputError for a checkpoint of another model or input).
  void load_init();
  int64_t num_parameters() const;
  size_t feature_cache_bytes() const;

  TrainConfig cfg_;
  RunData data_;
  ModelSpec spec_;
  ThreadPool pool_;
  Arena arena_;
  std::unique_ptr<Network> net_;  // f32 runs; for int8 the description of qnet_, unallocated
  std::unique_ptr<QNetwork> qnet_;
  std::unique_ptr<NpuNetwork> npu_;   // int8-npu runs (net_ holds the f32 model it came from)
  std::vector<int8_t> npu_features_;  // one batch of cached int8 features (cache_features)
  std::vector<std::pair<int, double>> bp_bits_;
  int8::StepConfig int8_cfg_;  // of epoch int8_epoch_ (the step number aside)
  int int8_epoch_ = -1;
  std::vector<float> logits_f32_;  // INT8's float loss and the sign diagnostic (not in the plan)
  std::unique_ptr<Sgd> sgd_;
  uint8_t* labels_ = nullptr;
  int head_ = 0;
  int frozen_ = 0;  // layers before it are frozen (train_layers)
  std::array<std::shared_ptr<const FeatureSet>, 3> features_;  // per Split, when cached
  bool features_filled_ = false;     // the next step's frozen output is filled already
  bool stats_pass_ = false;          // the next pass is the step's first
  QSchedulerConfig q_scheduler_;     // set by run() (budget mode needs the steps per epoch)
  std::vector<Tensor> zo_momentum_;  // per body parameter, when zo_momentum > 0
  std::vector<std::pair<int, double>> sparsity_;
  zo::ProjectOptions project_;
  zo::Distribution distribution_;
  MemoryPlan plan_;
  TrainState state_;
};

}  // namespace zotrain
