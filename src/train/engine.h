// The one interface the trainer runs a model through, whatever its precision: load a batch, take
// an optimizer step, evaluate, cache frozen features, save and restore its state. Each precision
// (f32, NITI int8, int8-npu) is one implementation in a file of its own, made by make_engine from
// the table in engine.cpp; the trainer keeps the data loop, the schedules, the metrics and the
// checkpoints, and never asks which precision it runs.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "train/int8_step.h"
#include "zotrain/core/arena.h"
#include "zotrain/core/memory_plan.h"
#include "zotrain/core/thread_pool.h"
#include "zotrain/data/batcher.h"
#include "zotrain/dist/world.h"
#include "zotrain/nn/network.h"
#include "zotrain/train/checkpoint.h"
#include "zotrain/train/config.h"
#include "zotrain/train/feature_cache.h"
#include "zotrain/train/run_data.h"
#include "zotrain/train/sgd.h"
#include "zotrain/train/trainer.h"

namespace zotrain {

class QNetwork;
class NpuNetwork;

// What one step is asked to do.
struct StepInput {
  int64_t rows = 0;  // the batch: the first rows of the input filled by fill()
  const uint8_t* labels = nullptr;
  int epoch = 0;             // 0-based: the schedules' values (sparsity, bit widths)
  int64_t step = 0;          // optimizer steps so far: it names the perturbation seeds
  double lr = 0, zo_lr = 0;  // of the epoch
  int q = 1;                 // ZO samples of the epoch
  bool features = false;     // fill() loaded the frozen layers' output, not the input
};

// The parts of a checkpoint an engine owns: the f32 network's parameters (null for int8, whose
// weights are `extra` tensors), the head's optimizer and further named state.
struct CheckpointParts {
  const Network* net = nullptr;
  Sgd* sgd = nullptr;
  std::vector<std::pair<std::string, Tensor>> extra;
};

// Everything an engine is made from. `net` is the model's f32 description (allocated by the
// engine where it runs it); `init`, when set, holds the parameters to start from (--init).
struct EngineArgs {
  const TrainConfig& cfg;
  Network& net;
  Arena& arena;
  ThreadPool& pool;
  const RunData& data;
  int head = 0;    // first layer trained by backprop
  int frozen = 0;  // first trained layer
  const Checkpoint* init = nullptr;
};

class Engine {
 public:
  virtual ~Engine() = default;

  // Copies batch `index` of `batches` into the input (with `features`, into the frozen layers'
  // output: `batches` is a FeatureSource) and its labels; returns its rows.
  virtual int64_t fill(const BatchSource& batches, int64_t index, uint8_t* labels,
                       bool features) = 0;
  // One optimizer step of the run's method on the batch fill() loaded.
  virtual StepResult step(const StepInput& in) = 0;
  // Work between an epoch's steps and its evaluation; returns the forward passes it ran.
  virtual int64_t end_epoch(int epoch) {
    (void)epoch;
    return 0;
  }
  // The share of `batches` classified right, in evaluation mode.
  virtual double evaluate(BatchSource& batches, bool features) = 0;
  // The frozen layers' output of every example of `images` (file order), for cache_features.
  virtual FeatureSet extract_features(BatchSource& images, int64_t examples) = 0;
  // One inference pass on the first `rows` rows of the input (benchmarks).
  virtual void forward(int64_t rows) = 0;
  // Batch `index` of `batches` in evaluation mode: its logits into logits [rows, classes] (an
  // integer network's dequantized); returns its rows.
  virtual int64_t predict(const BatchSource& batches, int64_t index, float* logits) = 0;
  // The parameter tensors where the engine keeps them (trainer.h's ParamView).
  virtual std::vector<ParamView> parameters() = 0;
  // Called after a caller wrote parameters() (int8-npu re-quantizes its program).
  virtual void parameters_changed() {}

  virtual CheckpointParts checkpoint() = 0;
  // Continues from a checkpoint of the same run (after construction).
  virtual void resume(const Checkpoint& ckpt) = 0;
  // Called once per epoch when the q schedule has just grown q (a plateau); true if the engine
  // changed anything (int8-npu's recalibration).
  virtual bool on_plateau() { return false; }
  // The epoch's fields of metrics.jsonl that only this engine has; `sums` adds up the epoch's
  // step results.
  virtual void add_epoch_metrics(nlohmann::json& line, int epoch, const StepResult& sums) const {
    (void)line, (void)epoch, (void)sums;
  }

  virtual int64_t num_parameters() const = 0;
  // Bytes of the arena the int8-npu program takes (summary.json's npu_bytes).
  virtual size_t device_bytes() const { return 0; }
  // The integer networks, for tests and benchmarks that look inside (null for other engines).
  virtual QNetwork* int8_network() { return nullptr; }
  virtual NpuNetwork* npu_network() { return nullptr; }
};

// The engine of cfg.precision.
std::unique_ptr<Engine> make_engine(const EngineArgs& args);
// The buffers the engine of cfg.precision takes from the arena for a split at `head`, with the
// run's optimizer state and labels.
MemoryPlan engine_plan(const Network& net, const TrainConfig& cfg, int head, int frozen);

// The plans and engines per precision (one file each).
MemoryPlan f32_plan(const Network& net, const TrainConfig& cfg, int head, int frozen);
MemoryPlan int8_plan(const Network& net, const TrainConfig& cfg, int head, int frozen);
MemoryPlan npu_plan(const Network& net, const TrainConfig& cfg, int head, int frozen);
std::unique_ptr<Engine> make_f32_engine(const EngineArgs& args);
std::unique_ptr<Engine> make_int8_engine(const EngineArgs& args);
std::unique_ptr<Engine> make_npu_engine(const EngineArgs& args);

// The dropout key of every pass of step `step` (a stream apart from the perturbations').
uint64_t step_key(const TrainConfig& cfg, int64_t step);
// The integer step's settings in epoch `epoch` of a NITI int8 run (the step number, q and the
// distributed fields aside): the schedules turned into integers.
int8::StepConfig int8_step_config(const TrainConfig& cfg, int epoch);

// The share of the examples of `batches` a network classifies right: run(b, labels) loads batch
// b, runs it and returns its rows and correct count.
// The ranks of a distributed run take turns over the batches and add up their counts.
template <typename Run>
double accuracy(BatchSource& batches, int64_t batch, Run run) {
  batches.start_epoch(0);
  std::vector<uint8_t> labels(batch);
  dist::World& w = dist::world();
  int64_t counts[2] = {0, 0};  // correct, seen
  for (int64_t b = w.rank(); b < batches.batches_per_epoch(); b += w.size()) {
    const auto [rows, c] = run(b, labels.data());
    counts[1] += rows, counts[0] += c;
  }
  w.sum(counts, 2);
  return counts[1] ? static_cast<double>(counts[0]) / counts[1] : 0.0;
}

}  // namespace zotrain
