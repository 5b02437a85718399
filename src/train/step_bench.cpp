#include "train/step_bench.h"

#include "zotrain/core/rng.h"

namespace zotrain {

DataSplits generated_data(const Shape& item, int64_t classes, int64_t n) {
  Dataset d;
  d.name = "generated";
  d.item_shape = item;
  d.num_classes = static_cast<int>(classes);
  Rng rng(1, 2);
  d.pixels.resize(static_cast<size_t>(n * item.numel()));
  for (uint8_t& p : d.pixels) p = static_cast<uint8_t>(rng.below(256));
  for (int64_t i = 0; i < n; ++i)
    d.labels.push_back(static_cast<uint8_t>(rng.below(static_cast<uint32_t>(classes))));
  return {d, Dataset{"generated", item, {}, {}, d.num_classes}, d};
}

namespace {

TrainConfig on_generated_data(TrainConfig cfg) {
  // No validation split: every generated example is in the training batch.
  cfg.data = "generated";
  cfg.val_size = 0;
  return cfg;
}

}  // namespace

StepBench::StepBench(const TrainConfig& cfg, const Shape& item, int64_t classes)
    : trainer_(on_generated_data(cfg), generated_data(item, classes, cfg.batch)) {
  rows_ = trainer_.fill_input(
      *trainer_.data().batches(Split::kTrain, trainer_.config().batch, false, 0), 0);
}

void StepBench::forward() {
  trainer_.forward(rows_);
}

double StepBench::forward_ops() const {
  return 2.0 * static_cast<double>(trainer_.network().forward_macs(rows_));
}

double StepBench::step_ops() const {
  const TrainState& s = trainer_.state();
  const double head =
      2.0 * static_cast<double>(trainer_.network().forward_macs(rows_, trainer_.head()));
  return static_cast<double>(s.forward_passes) * forward_ops() +
         static_cast<double>(s.backward_passes) * 2.0 * head;
}

}  // namespace zotrain
