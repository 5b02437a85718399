// Activations as plain loops that the compiler vectorizes: every element is loaded before the
// select, since a load inside one arm of the select would be a branch.
#include "kernels/activation.h"

#include "target_clones.h"

namespace zotrain::kernels {

ZT_CLONES void relu_forward(int64_t n, const float* x, float* y, float cap) {
  for (int64_t i = 0; i < n; ++i) y[i] = relu_value(x[i], cap);
}

ZT_CLONES void relu_backward(int64_t n, const float* y, const float* dy, float* dx, float cap) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = dy[i], v = y[i];
    dx[i] = v > 0.0f && v < cap ? g : 0.0f;
  }
}

}  // namespace zotrain::kernels
