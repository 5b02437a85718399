// Checkpoints: the parameters, the optimizer state and where training stands, in one
// TensorFile written atomically. The same file serves as the trained model for `zotrain eval`.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "zotrain/core/tensor_file.h"
#include "zotrain/data/dataset.h"
#include "zotrain/nn/network.h"
#include "zotrain/train/config.h"
#include "zotrain/train/q_scheduler.h"
#include "zotrain/train/sgd.h"

namespace zotrain {

struct TrainState {
  int epochs_done = 0;
  int64_t steps = 0;            // optimizer steps so far (they name the ZO perturbation seeds)
  int64_t forward_passes = 0;   // batch forward passes of training so far
  int64_t backward_passes = 0;  // batch backward passes of training so far
  double seconds = 0;           // training wall time so far
  double best_val_acc = -1;
  int best_epoch = -1;
  QSchedulerState q_scheduler;  // q_schedule qscheduler or budget
};

struct CheckpointMeta {
  TrainConfig config;
  Shape item_shape;
  int64_t num_classes = 0;
  Normalization norm;
  TrainState state;
};

// sgd may be null (no optimizer state); `extra` names further state tensors (ZO momentum, the
// weights of an int8 run, whose f32 `net` is then null).
void save_checkpoint(const std::string& path, const CheckpointMeta& meta, const Network* net,
                     Sgd* sgd, const std::vector<std::pair<std::string, Tensor>>& extra = {});
// What save_checkpoint writes, in memory: its tensors view the network's and the optimizer's.
TensorFile checkpoint_file(const CheckpointMeta& meta, const Network* net, Sgd* sgd,
                           const std::vector<std::pair<std::string, Tensor>>& extra = {});
// Reads and checks a checkpoint file; InputError naming the path for any problem.
struct Checkpoint {
  std::string path;
  CheckpointMeta meta;
  TensorFile file;
};
Checkpoint read_checkpoint(const std::string& path);
// Copies parameters (and momentum, when sgd is not null) into the network; InputError when the
// checkpoint belongs to another model.
// `extra` tensors (views) are filled from the tensors of the same names.
void restore_checkpoint(const Checkpoint& ckpt, Network* net, Sgd* sgd,
                        std::vector<std::pair<std::string, Tensor>> extra = {});

}  // namespace zotrain
