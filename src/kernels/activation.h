// Element-wise activations over n contiguous floats. x and y (dy and dx) may alias.
#pragma once

#include <cstdint>
#include <limits>

namespace zotrain::kernels {

constexpr float kNoCap = std::numeric_limits<float>::infinity();

// min(max(v, 0), cap) as every ReLU here computes it (a NaN gives 0).
[[gnu::always_inline]] inline float relu_value(float v, float cap) {
  return v > 0.0f ? (v < cap ? v : cap) : 0.0f;
}

// y = min(max(x, 0), cap): ReLU, or with cap 6 ReLU6.
void relu_forward(int64_t n, const float* x, float* y, float cap = kNoCap);
// dx = dy where 0 < y < cap, else 0 (dx may be dy). Uses the output, so x may have been
// overwritten in place.
void relu_backward(int64_t n, const float* y, const float* dy, float* dx, float cap = kNoCap);

}  // namespace zotrain::kernels
