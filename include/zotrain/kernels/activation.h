// Element-wise activations over n contiguous floats. x and y (dy and dx) may alias.
#pragma once

#include <cstdint>

namespace zotrain::kernels {

// y = max(x, 0).
void relu_forward(int64_t n, const float* x, float* y);
// dx = dy where y > 0, else 0. Uses the output, so x may have been overwritten in place.
void relu_backward(int64_t n, const float* y, const float* dy, float* dx);

}  // namespace zotrain::kernels
