// The examples of a run, whichever kind they are: image sets (uint8 pixels, normalized as a batch
// is copied in) or point-cloud sets (each cloud sampled down to `points` points and, for
// training, augmented). The trainer, the evaluation and the CLI read batches through it, into an
// f32 or an int8 input buffer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>

#include "zotrain/data/dataset.h"
#include "zotrain/data/epoch_order.h"
#include "zotrain/data/point_registry.h"
#include "zotrain/data/registry.h"
#include "zotrain/nn/int8/qnetwork.h"

namespace zotrain {

enum class Split { kTrain, kVal, kTest };

// One split's batches: in a seeded order per epoch (with augmentation) for training, else in
// file order.
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  virtual void start_epoch(int64_t epoch) = 0;
  virtual int64_t batches_per_epoch() const = 0;
  // Copies batch `index` of the current epoch into x and its labels into `labels` (may be null);
  // returns the number of rows. With a `share` (a data-parallel rank's), x gets only the share's
  // rows, from its first row; labels still every row's.
  virtual int64_t fill(int64_t index, float* x, uint8_t* labels, RowShare share = {}) const = 0;
  // The same for an integer network: mantissas of exponent RunData::int8_exp().
  virtual int64_t fill(int64_t index, int8_t* x, uint8_t* labels, RowShare share = {}) const = 0;
};

// The batches, in order, of `n` inputs already in a network's form: x holds n × item_numel
// floats, labels n classes (or null). An integer network gets each input as the mantissa of
// 2^int8_exp nearest to it, saturated to ±127. x and labels must outlive the source.
std::unique_ptr<BatchSource> input_batches(const float* x, const uint8_t* labels, int64_t n,
                                           int64_t item_numel, int64_t batch, int int8_exp);

class RunData {
 public:
  // Images, normalized by the training split's statistics.
  RunData(DataSplits images);  // NOLINT: a DataSplits is run data
  // Point clouds, sampled to `points` points (InputError unless 1 <= points <= the clouds').
  RunData(PointSplits clouds, int64_t points);
  // A data set by name or folder (see load_data and load_point_data): point clouds for a
  // point-cloud name or a folder with train_files.txt, else images.
  static RunData load(const std::string& name_or_path, const DataOptions& options, int64_t points);

  bool is_point_cloud() const { return std::holds_alternative<PointSplits>(data_); }
  // One example's input shape: {C, H, W} for images, {3, 1, points} for clouds.
  Shape item_shape() const;
  int num_classes() const;
  int64_t size(Split split) const;
  // How image pixels become inputs (mean 0, std 1 for clouds, which need none). Evaluating a
  // checkpoint uses the training run's.
  const Normalization& normalization() const { return norm_; }
  void set_normalization(const Normalization& norm);
  // The exponent of int8 inputs: fixed by the largest magnitude any input can take.
  int int8_exp() const;

  // The batches of a split; `train` shuffles per epoch from `seed` (and augments clouds).
  std::unique_ptr<BatchSource> batches(Split split, int64_t batch, bool train, uint64_t seed) const;
  // The batches, in order, of a caller's images rather than a split's (images of item_shape(),
  // normalized and quantized as this run's); InputError for another shape or a point-cloud run.
  std::unique_ptr<BatchSource> batches_of(const Dataset& images, int64_t batch) const;

 private:
  std::variant<DataSplits, PointSplits> data_;
  int64_t points_ = 0;
  Normalization norm_;
  InputQuantizer quantizer_;
};

}  // namespace zotrain
