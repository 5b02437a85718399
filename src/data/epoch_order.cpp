#include "zotrain/data/epoch_order.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "zotrain/core/error.h"
#include "zotrain/core/rng.h"
#include "zotrain/data/dataset.h"

namespace zotrain {
namespace {

// Tags the Rng stream (the epoch goes in the low bits) so shuffling never shares numbers with
// other users of the same seed.
constexpr uint64_t kShuffleStream = 0x5348554600000000ull;  // "SHUF"

}  // namespace

EpochOrder::EpochOrder(int64_t size, int64_t batch_size, bool shuffle, uint64_t seed)
    : size_(size), batch_size_(batch_size), shuffle_(shuffle), seed_(seed) {
  if (batch_size <= 0)
    throw InputError("batch size is " + std::to_string(batch_size) + "; expected 1 or more");
  start_epoch(0);
}

void EpochOrder::start_epoch(int64_t epoch) {
  ZT_ASSERT(epoch >= 0);
  epoch_ = epoch;
  if (shuffle_) {
    Rng rng(seed_, kShuffleStream + static_cast<uint64_t>(epoch));
    order_ = random_permutation(size_, rng);
  } else {
    order_.resize(static_cast<size_t>(size_));
    std::iota(order_.begin(), order_.end(), int64_t{0});
  }
}

int64_t EpochOrder::batches_per_epoch() const {
  return (size_ + batch_size_ - 1) / batch_size_;
}

int64_t EpochOrder::rows(int64_t index) const {
  ZT_ASSERT(index >= 0 && index < batches_per_epoch());
  return std::min(batch_size_, size_ - index * batch_size_);
}

}  // namespace zotrain
