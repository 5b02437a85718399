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
#include "zotrain/nn/network.h"
#include "zotrain/train/checkpoint.h"
#include "zotrain/train/config.h"
#include "zotrain/train/device_run.h"
#include "zotrain/train/feature_cache.h"
#include "zotrain/train/q_scheduler.h"
#include "zotrain/train/run_data.h"

namespace zotrain {

class OutputFolder;

class ParamAverage;
class Engine;
struct CheckpointParts;
class QNetwork;
class NpuNetwork;

// What one optimizer step did: the mean loss, the right answers of its first pass, the passes
// it ran and, for int8 ZO, the signs of its loss differences (int8::StepResult).
struct StepResult {
  double loss = 0;
  int64_t correct = 0;
  int64_t forward_passes = 0, backward_passes = 0;
  int64_t signs = 0, zero_signs = 0, agree = 0;
};

struct EpochReport {
  int epoch = 0;  // 1-based
  int epochs = 0;
  double lr = 0, train_loss = 0, train_acc = 0, val_acc = 0, test_acc = 0;
  double seconds = 0;  // training time so far, evaluation excluded
  int64_t forward_passes = 0, backward_passes = 0;
  size_t arena_bytes = 0, peak_rss_bytes = 0;
  std::string metrics;  // the epoch's line of metrics.jsonl (a JSON object): every field above
                        // and those of the run's precision and schedules
};

// One parameter tensor where the run keeps it, to read or change in place (the Python
// bindings' numpy views): an f32 run's weights and biases and batch-norm state, a NITI int8
// run's weight mantissas (value = mantissa × 2^exp; the exponent may change as it trains), an
// int8-npu run's float master weights of the trained layers (batch norm folded in), which
// only Trainer::set_parameter changes (it re-quantizes the program).
struct ParamView {
  enum class Type { kF32, kS8 };
  std::string name;  // "3.weight", as a checkpoint's "param/3.weight"
  Type type = Type::kF32;
  void* data = nullptr;
  Shape shape;
  int exp = 0;  // kS8
  bool writable = true;
};

struct TrainCallbacks {
  std::function<void(int epoch, int64_t batch, int64_t batches, double loss)> on_batch;
  std::function<void(const EpochReport&)> on_epoch;
};

// Accuracy of `net` on every batch of `batches` (at most the network's batch size each), forward
// passes in evaluation mode. With `features`, the batches hold the frozen layers' output (a
// FeatureSource) and only the others run.
double evaluate(Network& net, BatchSource& batches, bool features = false);

// The accuracy of a checkpoint's model on the test split of `data` (the checkpoint's input
// shape and normalization), `batch` rows at a time on `threads` threads.
double evaluate_checkpoint(const Checkpoint& ckpt, const RunData& data, int64_t batch, int threads);
// The same on the test split of the data set `data` ("" for the checkpoint's own), loaded as
// `zotrain eval` loads it; InputError for data of other inputs or more classes, a batch < 1 or
// threads outside [1, 256]. `examples`, when given, gets the test examples' count.
double evaluate_checkpoint(const Checkpoint& ckpt, const std::string& data, int64_t batch,
                           int threads, int64_t* examples = nullptr);

// The memory a run takes: its precision's plan (the network's buffers, or the integer
// network's for int8) plus optimizer state and labels.
MemoryPlan training_plan(const Network& net, const TrainConfig& cfg, int head_start);

// What `zotrain memory` reports of a configuration for inputs `item` and `classes`, without
// data: the run's plan, and the totals of Full ZO, Full BP (f32 for int8-npu, which runs ZO only)
// and f32 inference of the same model and batch.
struct MemoryReport {
  TrainConfig cfg;
  MemoryPlan plan;
  int head = 0, bp_layers = 0, param_layers = 0;
  size_t full_zo = 0, full_bp = 0, inference = 0;
  Precision full_bp_precision = Precision::kF32;
};
MemoryReport memory_report(const TrainConfig& cfg, const Shape& item, int64_t classes);
// The report as `zotrain memory --json` prints it (a JSON object).
std::string memory_report_json(const MemoryReport& r);

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
  ~Trainer();
  // Continues from a checkpoint written by a run with the same config (epochs may grow).
  void resume(const Checkpoint& ckpt);
  // Trains up to cfg.epochs, writing the output folder (held for the call: another run may use
  // it after). A run that ends by an exception cannot run() again: its checkpoint continues it.
  void run(const TrainCallbacks& callbacks = {});

  const TrainConfig& config() const { return cfg_; }
  Network& network() { return *net_; }
  const Network& network() const { return *net_; }
  // The integer network of a precision int8 run (else null).
  QNetwork* int8_network();
  // The NPU-style int8 program of a precision int8-npu run, calibrated (else null).
  NpuNetwork* npu_network();
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

  // One optimizer step (of the run's method) on the first `rows` rows of the network's input
  // buffer and labels(), with the learning rates and sparsity of `epoch` (0-based).
  StepResult step(int64_t rows, int epoch);
  uint8_t* labels() { return labels_; }
  // Copies batch `index` of the source's epoch into the input buffer (f32 or int8).
  int64_t fill_input(const BatchSource& batches, int64_t index);
  // One inference pass on the first `rows` rows of the input buffer (benchmarks).
  void forward(int64_t rows);
  // The logits of every example of `batches` (batches in order, evaluation mode) into
  // logits [examples, classes]; an int8 network's dequantized. Returns the examples.
  int64_t predict(BatchSource& batches, float* logits);
  // One optimizer step on batch 0 of `batches` (at most config().batch rows: a caller's batch,
  // RunData::batches_of), with the learning rates and sparsity of `epoch` (0-based).
  StepResult step(const BatchSource& batches, int epoch);
  // The parameter tensors, in the network's order (ParamView).
  std::vector<ParamView> parameters();
  // The parameter called `name`; InputError naming the run's parameters for an unknown name.
  ParamView parameter(const std::string& name);
  // Copies `values` (the tensor's numel, as its type) into the parameter called `name`;
  // InputError for an unknown name.
  void set_parameter(const std::string& name, const void* values);
  // The run as a checkpoint, in memory (its tensors view the run's): what run() writes after an
  // epoch, for save() and export.
  Checkpoint checkpoint();
  // Writes checkpoint() to `path`, atomically.
  void save(const std::string& path);
  // Packs the first epoch's steps of a precision int8 run for the device program
  // (device_run.h): every batch as the engine fills it and the step's integer settings.
  // InputError for what the device does not run (another precision, a q schedule, an init
  // checkpoint, a distributed run, the float loss of zo_sign float or sign_agreement).
  DeviceRunSummary write_device_run(const std::string& path);

 private:
  // The BP and ZO learning rates of a 0-based epoch (step decay).
  std::pair<double, double> learning_rates(int epoch) const;
  double evaluate_on(Split split);
  // The validation and test accuracy (0 for an empty split), of the parameters' average when
  // ema_decay is set.
  std::pair<double, double> evaluate_val_test();
  struct EpochSums : StepResult {
    int64_t rows = 0;
  };
  EpochSums train_epoch(BatchSource& batches, int epoch, bool cached, const TrainCallbacks& cb);
  // With cache_features: the frozen layers' output of every example of each split.
  void cache_features();
  // A split's batches: cached features when there are, else the data's.
  std::unique_ptr<BatchSource> source(Split split, bool train) const;
  void write_summary() const;
  // The engine's checkpoint parts and the parameters' average.
  CheckpointParts checkpoint_parts();
  // What a checkpoint of the run says of it now.
  CheckpointMeta meta() const;
  // The checkpoint of `parts` (the engine's, now) to `path`, atomically; RuntimeError naming
  // the tensor when a value is not finite (the previous checkpoint is kept).
  void write_checkpoint(const std::string& path, const CheckpointParts& parts) const;
  // Takes the output folder for this run's life (output_folder.h), once.
  void claim_output();
  // cfg.init's checkpoint (InputError for a checkpoint of another model or input).
  Checkpoint read_init() const;
  int64_t num_parameters() const;
  size_t feature_cache_bytes() const;

  TrainConfig cfg_;
  RunData data_;
  ModelSpec spec_;
  ThreadPool pool_;
  Arena arena_;
  std::unique_ptr<Network> net_;  // the model; the engine allocates what of it it runs
  std::unique_ptr<Engine> engine_;
  uint8_t* labels_ = nullptr;
  int head_ = 0;
  int frozen_ = 0;  // layers before it are frozen (train_layers)
  std::array<std::shared_ptr<const FeatureSet>, 3> features_;  // per Split, when cached
  bool features_filled_ = false;  // the next step's frozen output is filled already
  QSchedulerConfig q_scheduler_;  // set by run() (budget mode needs the steps per epoch)
  std::vector<std::pair<int, double>> sparsity_;  // reported per epoch
  MemoryPlan plan_;
  std::unique_ptr<ParamAverage> average_;  // with ema_decay
  TrainState state_;
  std::unique_ptr<OutputFolder> output_;  // null on a distributed run's ranks but 0
  uint64_t step_bytes_sent_ = 0;          // by this rank in the steps of this session
  int64_t steps_run_ = 0;
  bool interrupted_ = false;  // run() ended by an exception, mid-epoch
};

}  // namespace zotrain
