// Fine-tuning with frozen layers: their output (in evaluation mode, a pure function of the
// example) computed once per example and served as batches in place of the images, so that a run
// costs the trained layers' passes only. Forward-pass counts still count whole passes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "zotrain/data/epoch_order.h"
#include "zotrain/train/run_data.h"

namespace zotrain {

// The features of one split, in the split's order: f32 or int8 (the other one empty).
struct FeatureSet {
  int64_t numel = 0;  // per example
  std::vector<float> f32;
  std::vector<int8_t> int8;
  std::vector<uint8_t> labels;
  size_t bytes() const { return f32.size() * sizeof(float) + int8.size() + labels.size(); }
};

// Runs `images` (file order) batch by batch: fill_and_run(b, labels) loads batch b, runs the
// frozen layers and returns the rows and a pointer to their features, [rows, numel].
template <typename T>
using FrozenRun = std::function<std::pair<int64_t, const T*>(int64_t batch, uint8_t* labels)>;
FeatureSet extract_features(BatchSource& images, int64_t examples, int64_t numel,
                            const FrozenRun<float>& run);
FeatureSet extract_features(BatchSource& images, int64_t examples, int64_t numel,
                            const FrozenRun<int8_t>& run);

// A FeatureSet's batches: a seeded order per epoch for training (the order the images' batches
// take for the same seed), else in order. fill() copies features, f32 or int8 as extracted.
class FeatureSource : public BatchSource {
 public:
  FeatureSource(std::shared_ptr<const FeatureSet> set, int64_t batch, bool train, uint64_t seed);
  void start_epoch(int64_t epoch) override { order_.start_epoch(epoch); }
  int64_t batches_per_epoch() const override { return order_.batches_per_epoch(); }
  int64_t fill(int64_t index, float* x, uint8_t* labels, RowShare share = {}) const override;
  int64_t fill(int64_t index, int8_t* x, uint8_t* labels, RowShare share = {}) const override;

 private:
  template <typename T>
  int64_t copy(const std::vector<T>& from, int64_t index, T* x, uint8_t* labels,
               RowShare share) const;

  std::shared_ptr<const FeatureSet> set_;
  EpochOrder order_;
};

}  // namespace zotrain
