// Internal to src/train: an exponential moving average of the trained parameters (ema_decay),
// which evaluation uses in place of the parameters themselves. ZO steps move the weights along
// random directions; the average keeps their common drift and cancels most of the rest, so it
// classifies better than the last step's weights, most of all while the learning rate is high.
// Training never reads the average: a run's steps give the same bits with it or without.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "zotrain/core/arena.h"
#include "zotrain/core/memory_plan.h"
#include "zotrain/core/tensor.h"
#include "zotrain/core/tensor_file.h"
#include "zotrain/nn/network.h"
#include "zotrain/train/checkpoint.h"
#include "zotrain/train/config.h"
#include "zotrain/train/trainer.h"

namespace zotrain {

// The checkpoint tensor that holds parameter `name`'s average.
std::string average_tensor_name(const std::string& param_name);

// Adds the average's buffers (one per trained parameter of layers >= frozen) to a plan.
void add_average_plan(MemoryPlan& plan, const Network& net, const TrainConfig& cfg, int frozen);

class ParamAverage {
 public:
  // Averages the f32 parameters of `params` in layers >= frozen, starting from their values,
  // in buffers from the arena.
  ParamAverage(const std::vector<ParamView>& params, int frozen, double decay, Arena& arena);

  // Folds in the parameters after optimizer step `steps` (1 for the first): the decay is
  // min(ema_decay, (1 + steps) / (10 + steps)), so the first epochs are not held back by the
  // initial weights.
  void update(int64_t steps);
  // Exchanges the parameters and their averages (twice restores both, bit for bit).
  void swap();
  // The averages as checkpoint tensors (views).
  std::vector<std::pair<std::string, Tensor>> state() const;
  // Continues from a checkpoint's averages; InputError naming a missing tensor.
  void restore(const Checkpoint& ckpt);

 private:
  struct Item {
    std::string name;
    float* param;
    Tensor average;
  };
  double decay_ = 0;
  std::vector<Item> items_;
};

// The checkpoint's model: its parameters ("param/<name>"), each replaced by its average where
// the file holds one (a run with ema_decay was evaluated on the averages). What evaluation,
// export and --init read; resuming a run reads the parameters themselves.
TensorFile with_averages(const TensorFile& file);

}  // namespace zotrain
