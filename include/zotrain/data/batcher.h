// Cuts a data set into batches, in a seeded order per epoch, and copies each batch into the
// network's f32 input buffer, normalizing on the way.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "zotrain/data/dataset.h"

namespace zotrain {

class Batcher {
 public:
  // `data` must outlive the Batcher. batch_size must be positive and norm.std nonzero (else
  // InputError). Starts at epoch 0.
  Batcher(const Dataset& data, int64_t batch_size, Normalization norm, bool shuffle, uint64_t seed);

  // Sets the order of the examples for `epoch` (>= 0): a permutation drawn from the Rng stream
  // of (seed, epoch) if shuffling, else 0..N-1. The same (seed, epoch) gives the same order in any
  // process, so a resumed run sees the same batches.
  void start_epoch(int64_t epoch);

  // ceil(N / batch_size); the last batch may be smaller.
  int64_t batches_per_epoch() const;
  // The number of rows of batch `index` of an epoch.
  int64_t rows(int64_t index) const;

  // Copies batch `index` of the current epoch into x (layout [rows, C, H, W], at least
  // rows * C*H*W floats) as (p / 255 - mean) / std, and its labels into `labels` (may be null).
  // Returns the number of rows. Const and free of shared state, so threads may fill different
  // batches at once.
  int64_t fill(int64_t index, float* x, uint8_t* labels) const;
  // The same for an integer network: each pixel p becomes lut[p] (see input_quantizer).
  int64_t fill(int64_t index, const std::array<int8_t, 256>& lut, int8_t* x, uint8_t* labels) const;

  const Dataset& data() const { return data_; }
  int64_t batch_size() const { return batch_size_; }
  int64_t epoch() const { return epoch_; }
  // Example indices of the current epoch in batch order.
  const std::vector<int64_t>& order() const { return order_; }

 private:
  template <typename T>
  int64_t fill_with(int64_t index, const T* lut, T* x, uint8_t* labels) const;

  const Dataset& data_;
  int64_t batch_size_;
  bool shuffle_;
  uint64_t seed_;
  int64_t epoch_ = 0;
  std::vector<int64_t> order_;
  std::array<float, 256> lut_;  // normalized value of each pixel value
};

}  // namespace zotrain
