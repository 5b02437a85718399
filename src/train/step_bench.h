// Training steps timed on generated data, as `zotrain bench` and bench/steps_bench.cpp time them:
// a Trainer of the configuration on one batch of random pixels and labels of the input shape
// (no data set to load, so any model and input shape can be timed), and the work of its steps.
#pragma once

#include <cstdint>

#include "zotrain/core/shape.h"
#include "zotrain/data/registry.h"
#include "zotrain/train/config.h"
#include "zotrain/train/trainer.h"

namespace zotrain {

// `n` examples of random pixels and labels (a fixed seed) of shape `item`, as train and test
// set; the validation set is empty.
DataSplits generated_data(const Shape& item, int64_t classes, int64_t n);

class StepBench {
 public:
  // The trainer of `cfg` (its data named "generated", no validation split) on one batch of
  // generated_data, that batch already in its input buffer. InputError for a bad config.
  StepBench(const TrainConfig& cfg, const Shape& item, int64_t classes);

  Trainer& trainer() { return trainer_; }
  int64_t rows() const { return rows_; }
  // One optimizer step of the run's method on the batch.
  void step() { trainer_.step(rows_, 0); }
  // One unperturbed forward pass of the network the run trains on the batch, as inference runs
  // it: the f32 Network, the integer QNetwork (int8), or the NPU program (int8-npu).
  void forward();

  // Arithmetic of one forward pass of the whole network: 2 operations per multiply-add of the
  // f32 model's layers (Network::forward_macs), whatever the precision, so that an int8 pass
  // counts the same work as the float one (integer operations then).
  double forward_ops() const;
  // Arithmetic of the steps so far (TrainState's pass counters): forward_ops() per forward pass,
  // and per backward pass twice the forward operations of the layers it goes through (the head
  // from Trainer::head(), the whole network for bp) — the usual convention that the input
  // gradient and the weight gradient each cost about one forward pass.
  double step_ops() const;

 private:
  Trainer trainer_;
  int64_t rows_ = 0;
};

}  // namespace zotrain
