// Internal to src/train: an exponential moving average of the trained parameters (ema_decay),
// which evaluation uses in place of the parameters themselves. ZO steps move the weights along
// random directions; the average keeps their common drift and cancels most of the rest, so it
// classifies better than the last step's weights, most of all while the learning rate is high.
// Training never reads the average: a run's steps give the same bits with it or without.
// int8 weights (NITI: int8 mantissas under a fixed exponent) are averaged in integers: an int32
// with 16 fraction bits per mantissa, moved by a shift (the decay rounded to 1 - 2^-k), and
// evaluated rounded back to int8 mantissas under the same exponent.
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

// Adds the average's buffers (one per trained parameter of layers >= frozen; for int8 also the
// trained mantissas, kept aside while the average is evaluated) to a plan.
void add_average_plan(MemoryPlan& plan, const Network& net, const TrainConfig& cfg, int frozen);

class ParamAverage {
 public:
  // Averages the parameters of `params` in layers >= frozen, starting from their values, in
  // buffers from the arena.
  ParamAverage(const std::vector<ParamView>& params, int frozen, double decay, int warmup,
               Arena& arena);

  // Folds in the parameters after optimizer step `steps` (1 for the first): the decay is
  // min(ema_decay, (1 + steps) / (ema_warmup + steps)), so the first epochs are not held back by
  // the initial weights.
  void update(int64_t steps);
  // Exchanges the parameters and their averages (twice restores both, bit for bit).
  void swap();
  // The averages as checkpoint tensors (an int8 weight's as mantissas with fraction bits).
  std::vector<std::pair<std::string, Tensor>> state() const;
  // Continues from a checkpoint's averages; InputError naming a missing or malformed tensor.
  void restore(const Checkpoint& ckpt);

 private:
  struct Item {
    std::string name;
    float* param = nullptr;       // f32
    Tensor average;               // f32
    int8_t* mantissas = nullptr;  // int8: the weight's mantissas,
    int32_t* fixed = nullptr;     // their average (kFractionBits),
    int8_t* held = nullptr;       // and the trained ones while the average is in their place
    Shape shape;
    int64_t n = 0;
  };
  double decay_ = 0;
  int warmup_ = 0;
  int max_shift_ = 0;  // int8: the decay as 1 - 2^-max_shift_
  bool swapped_ = false;
  std::vector<Item> items_;
};

// An int8 weight's average in a checkpoint tensor, back to the mantissas evaluated (nearest,
// ties up).
int8_t average_mantissa(float average);

// The checkpoint's model: its parameters ("param/<name>", an int8 run's "qweight/<layer>"), each
// replaced by its average where the file holds one (a run with ema_decay was evaluated on the
// averages). What evaluation, export and --init read; resuming a run reads the parameters
// themselves.
TensorFile with_averages(const TensorFile& file);

}  // namespace zotrain
