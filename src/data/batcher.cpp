#include "zotrain/data/batcher.h"

#include <cmath>

#include "zotrain/core/error.h"

namespace zotrain {

Batcher::Batcher(const Dataset& data, int64_t batch_size, Normalization norm, bool shuffle,
                 uint64_t seed)
    : data_(data), order_(data.size(), batch_size, shuffle, seed) {
  if (!(std::isfinite(norm.mean) && std::isfinite(norm.std) && norm.std != 0))
    throw InputError("normalization (mean " + std::to_string(norm.mean) + ", std " +
                     std::to_string(norm.std) + ") must be finite with a nonzero std");
  // In double and rounded once, so each entry is the correctly rounded value of the formula.
  for (int p = 0; p < 256; ++p)
    lut_[p] = static_cast<float>((p / 255.0 - double{norm.mean}) / double{norm.std});
}

int64_t Batcher::fill(int64_t index, float* x, uint8_t* labels, RowShare share) const {
  return fill_with(index, lut_.data(), x, labels, share);
}

int64_t Batcher::fill(int64_t index, const std::array<int8_t, 256>& lut, int8_t* x, uint8_t* labels,
                      RowShare share) const {
  return fill_with(index, lut.data(), x, labels, share);
}

template <typename T>
int64_t Batcher::fill_with(int64_t index, const T* lut, T* x, uint8_t* labels,
                           RowShare share) const {
  const int64_t n = rows(index), d = data_.item_numel();
  const int64_t begin = share.begin(n), end = share.end(n);
  for (int64_t r = 0; r < n; ++r) {
    const int64_t i = order_.example(index, r);
    if (labels) labels[r] = data_.labels[i];
    if (r < begin || r >= end) continue;
    const uint8_t* src = data_.item(i);
    T* dst = x + (r - begin) * d;
    for (int64_t k = 0; k < d; ++k) dst[k] = lut[src[k]];
  }
  return n;
}

}  // namespace zotrain
