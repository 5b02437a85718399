// The max over the positions of each channel, for f32 and int8 alike: `channels` rows of `p`
// values in, one value each out; backward sends each row's error to its first maximum.
#pragma once

#include <algorithm>
#include <cstdint>

namespace zotrain::kernels {

template <typename T>
void global_max_pool_forward(const T* x, int64_t channels, int64_t p, T* y) {
  for (int64_t r = 0; r < channels; ++r) y[r] = *std::max_element(x + r * p, x + (r + 1) * p);
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
