// Activations as plain loops that the compiler vectorizes: every element is loaded before the
// select, since a load inside one arm of the select would be a branch.
#include "zotrain/kernels/activation.h"

namespace zotrain::kernels {

void relu_forward(int64_t n, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = v > 0.0f ? v : 0.0f;
  }
}

void relu_backward(int64_t n, const float* y, const float* dy, float* dx) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = dy[i];
    dx[i] = y[i] > 0.0f ? g : 0.0f;
  }
}

}  // namespace zotrain::kernels
