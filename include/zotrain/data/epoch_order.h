// The order in which a data set's examples are visited in each epoch, cut into batches: shared by
// the image Batcher and the PointBatcher.
#pragma once

#include <cstdint>
#include <vector>

namespace zotrain {

// The share of a batch's rows one of `parts` data-parallel ranks runs (docs/distributed.md):
// part p takes rows [n·p/P, n·(p+1)/P) of a batch of n rows; by default all of them.
struct RowShare {
  int part = 0, parts = 1;
  int64_t begin(int64_t rows) const { return rows * part / parts; }
  int64_t end(int64_t rows) const { return rows * (part + 1) / parts; }
};

class EpochOrder {
 public:
  // batch_size must be positive (else InputError). Starts at epoch 0.
  EpochOrder(int64_t size, int64_t batch_size, bool shuffle, uint64_t seed);

  // Sets the order for `epoch` (>= 0): a permutation drawn from the Rng stream of (seed, epoch)
  // if shuffling, else 0..N-1. The same (seed, epoch) gives the same order in any process, so a
  // resumed run sees the same batches.
  void start_epoch(int64_t epoch);

  // ceil(N / batch_size); the last batch may be smaller.
  int64_t batches_per_epoch() const;
  // The number of rows of batch `index` of an epoch.
  int64_t rows(int64_t index) const;
  // The example at row `row` of batch `index`.
  int64_t example(int64_t index, int64_t row) const { return order_[index * batch_size_ + row]; }

  int64_t batch_size() const { return batch_size_; }
  int64_t epoch() const { return epoch_; }
  // Example indices of the current epoch in batch order.
  const std::vector<int64_t>& order() const { return order_; }

 private:
  int64_t size_, batch_size_;
  bool shuffle_;
  uint64_t seed_;
  int64_t epoch_ = 0;
  std::vector<int64_t> order_;
};

}  // namespace zotrain
