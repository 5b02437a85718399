#include "zotrain/data/batcher.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "zotrain/core/error.h"

namespace zotrain {
namespace {

// Tags the Rng stream (the epoch goes in the low bits) so shuffling never shares numbers with
// other users of the same seed.
constexpr uint64_t kShuffleStream = 0x5348554600000000ull;  // "SHUF"

}  // namespace

Batcher::Batcher(const Dataset& data, int64_t batch_size, Normalization norm, bool shuffle,
                 uint64_t seed)
    : data_(data), batch_size_(batch_size), shuffle_(shuffle), seed_(seed) {
  if (batch_size <= 0)
    throw InputError("batch size is " + std::to_string(batch_size) + "; expected 1 or more");
  if (!(std::isfinite(norm.mean) && std::isfinite(norm.std) && norm.std != 0))
    throw InputError("normalization (mean " + std::to_string(norm.mean) + ", std " +
                     std::to_string(norm.std) + ") must be finite with a nonzero std");
  // In double and rounded once, so each entry is the correctly rounded value of the formula.
  for (int p = 0; p < 256; ++p)
    lut_[p] = static_cast<float>((p / 255.0 - double{norm.mean}) / double{norm.std});
  start_epoch(0);
}

void Batcher::start_epoch(int64_t epoch) {
  ZT_ASSERT(epoch >= 0);
  epoch_ = epoch;
  if (shuffle_) {
    Rng rng(seed_, kShuffleStream + static_cast<uint64_t>(epoch));
    order_ = random_permutation(data_.size(), rng);
  } else {
    order_.resize(static_cast<size_t>(data_.size()));
    std::iota(order_.begin(), order_.end(), int64_t{0});
  }
}

int64_t Batcher::batches_per_epoch() const {
  return (data_.size() + batch_size_ - 1) / batch_size_;
}

int64_t Batcher::rows(int64_t index) const {
  ZT_ASSERT(index >= 0 && index < batches_per_epoch());
  return std::min(batch_size_, data_.size() - index * batch_size_);
}

int64_t Batcher::fill(int64_t index, float* x, uint8_t* labels) const {
  return fill_with(index, lut_.data(), x, labels);
}

int64_t Batcher::fill(int64_t index, const std::array<int8_t, 256>& lut, int8_t* x,
                      uint8_t* labels) const {
  return fill_with(index, lut.data(), x, labels);
}

template <typename T>
int64_t Batcher::fill_with(int64_t index, const T* lut, T* x, uint8_t* labels) const {
  const int64_t n = rows(index), d = data_.item_numel();
  for (int64_t r = 0; r < n; ++r) {
    const int64_t i = order_[index * batch_size_ + r];
    const uint8_t* src = data_.item(i);
    T* dst = x + r * d;
    for (int64_t k = 0; k < d; ++k) dst[k] = lut[src[k]];
    if (labels) labels[r] = data_.labels[i];
  }
  return n;
}

}  // namespace zotrain
