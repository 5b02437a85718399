// The max over the positions of each channel, for f32 and int8 alike: `channels` rows of `p`
// values in, one value each out; backward sends each row's error to its first maximum.
#pragma once

#include <algorithm>
#include <cstdint>

namespace zotrain::kernels {

// The largest of x[0, p): eight interleaved running maxima, which vectorize (std::max_element
// tracks a position and branches on every element).
template <typename T>
T row_max(const T* x, int64_t p) {
  constexpr int kParts = 8;
  if (p < kParts) return *std::max_element(x, x + p);
  T part[kParts];
  std::copy(x, x + kParts, part);
  const int64_t whole = p / kParts * kParts;
  for (int64_t i = kParts; i < whole; i += kParts)
    for (int j = 0; j < kParts; ++j) part[j] = x[i + j] > part[j] ? x[i + j] : part[j];
  for (int64_t i = whole; i < p; ++i) part[0] = x[i] > part[0] ? x[i] : part[0];
  return *std::max_element(part, part + kParts);
}

template <typename T>
void global_max_pool_forward(const T* x, int64_t channels, int64_t p, T* y) {
  for (int64_t r = 0; r < channels; ++r) y[r] = row_max(x + r * p, p);
}

template <typename T>
void global_max_pool_backward(const T* x, const T* dy, int64_t channels, int64_t p, T* dx) {
  for (int64_t r = 0; r < channels; ++r) {
    const T* row = x + r * p;
    std::fill(dx + r * p, dx + (r + 1) * p, T{0});
    dx[r * p + (std::max_element(row, row + p) - row)] = dy[r];
  }
}

}  // namespace zotrain::kernels
