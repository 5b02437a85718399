// Cuts a data set into batches, in a seeded order per epoch, and copies each batch into the
// network's f32 input buffer, normalizing on the way.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "zotrain/data/dataset.h"
#include "zotrain/data/epoch_order.h"

namespace zotrain {

class Batcher {
 public:
  // `data` must outlive the Batcher. batch_size must be positive and norm.std nonzero (else
  // InputError). Starts at epoch 0.
  Batcher(const Dataset& data, int64_t batch_size, Normalization norm, bool shuffle, uint64_t seed);

  // As EpochOrder's (epoch_order.h).
  void start_epoch(int64_t epoch) { order_.start_epoch(epoch); }
  int64_t batches_per_epoch() const { return order_.batches_per_epoch(); }
  int64_t rows(int64_t index) const { return order_.rows(index); }

  // Copies batch `index` of the current epoch into x (layout [rows, C, H, W], at least
  // rows * C*H*W floats) as (p / 255 - mean) / std, and its labels into `labels` (may be null).
  // Returns the number of rows. Const and free of shared state, so threads may fill different
  // batches at once. With a `share`, x gets only the share's rows (from its first row), labels
  // still every row's.
  int64_t fill(int64_t index, float* x, uint8_t* labels, RowShare share = {}) const;
  // The same for an integer network: each pixel p becomes lut[p] (see input_quantizer).
  int64_t fill(int64_t index, const std::array<int8_t, 256>& lut, int8_t* x, uint8_t* labels,
               RowShare share = {}) const;

  const Dataset& data() const { return data_; }
  int64_t batch_size() const { return order_.batch_size(); }
  int64_t epoch() const { return order_.epoch(); }
  // Example indices of the current epoch in batch order.
  const std::vector<int64_t>& order() const { return order_.order(); }

 private:
  template <typename T>
  int64_t fill_with(int64_t index, const T* lut, T* x, uint8_t* labels, RowShare share) const;

  const Dataset& data_;
  EpochOrder order_;
  std::array<float, 256> lut_;  // normalized value of each pixel value
};

}  // namespace zotrain
