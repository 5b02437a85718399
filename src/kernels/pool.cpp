// Pooling: direct loops over the windows; max pooling with 2x2 windows at stride 2 (LeNet's, the
// common case) runs the kernel set's vector kernels forward and through a ReLU backward, and
// loops over output rows that the compiler vectorizes for the plain backward.
#include "zotrain/kernels/pool.h"

#include "kernel_set.h"
#include "kernels/activation.h"
#include "pool_walk.h"

namespace zotrain::kernels {

Pool2dGeometry Pool2dGeometry::make(int64_t in_h, int64_t in_w, int64_t k, int64_t stride,
                                    int64_t pad) {
  return {
      in_h, in_w, k, stride, (in_h + 2 * pad - k) / stride + 1, (in_w + 2 * pad - k) / stride + 1,
      pad};
}

void max_pool2d_forward(const Pool2dGeometry& g, int64_t planes, const float* x, float* y) {
  if (is_2x2_stride_2(g)) return active_kernels().max_pool_2x2(g, planes, x, y);
  max_pool_forward_any(g, planes, x, y);
}

void max_pool2d_backward(const Pool2dGeometry& g, int64_t planes, const float* x, const float* dy,
                         float* dx) {
  max_pool_backward_any(g, planes, x, dy, dx);
}

void max_pool2d_backward_relu(const Pool2dGeometry& g, int64_t planes, const float* x,
                              const float* dy, float* dx, float cap) {
  if (is_2x2_stride_2(g))
    return active_kernels().max_pool_2x2_backward_relu(g, planes, x, dy, dx, cap);
  // Other windows (rare) run the two passes.
  max_pool_backward_any(g, planes, x, dy, dx);
  relu_backward(planes * g.in_plane(), x, dx, dx, cap);
}

// Average pooling has no padding: every window is k x k.
void avg_pool2d_forward(const Pool2dGeometry& g, int64_t planes, const float* x, float* y) {
  const float area = static_cast<float>(g.k * g.k);
  for_each_window(g, planes, [&](int64_t base, int64_t out, PoolWindow w) {
    float sum = 0.0f;
    for (int64_t i = 0; i < w.rows; ++i)
      for (int64_t j = 0; j < w.cols; ++j) sum += x[base + w.origin + i * g.in_w + j];
    y[out] = sum / area;
  });
}

void avg_pool2d_backward(const Pool2dGeometry& g, int64_t planes, const float* dy, float* dx) {
  const float area = static_cast<float>(g.k * g.k);
  zero(dx, planes * g.in_plane());
  for_each_window(g, planes, [&](int64_t base, int64_t out, PoolWindow w) {
    const float share = dy[out] / area;
    for (int64_t i = 0; i < w.rows; ++i)
      for (int64_t j = 0; j < w.cols; ++j) dx[base + w.origin + i * g.in_w + j] += share;
  });
}

}  // namespace zotrain::kernels
