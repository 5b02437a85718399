// 2-D max and average pooling over planes [in_h, in_w] (one plane = one channel of one image):
// square window, stride, floor for the output size; max pooling may pad, its windows then
// clipped to the plane (padding never wins, as PyTorch's -inf). The functions take `planes`
// consecutive planes so that callers can split N*C planes over threads.
#pragma once

#include <cstdint>

namespace zotrain::kernels {

struct Pool2dGeometry {
  int64_t in_h = 0, in_w = 0, k = 0, stride = 1;
  int64_t out_h = 0, out_w = 0;
  int64_t pad = 0;  // max pooling only

  // Fills out_h and out_w: floor((in + 2 pad - k) / stride) + 1. The caller guarantees
  // k <= in + 2 pad and pad < k (every window holds a pixel of the plane).
  static Pool2dGeometry make(int64_t in_h, int64_t in_w, int64_t k, int64_t stride,
                             int64_t pad = 0);

  int64_t in_plane() const { return in_h * in_w; }
  int64_t out_plane() const { return out_h * out_w; }
};

// y = the maximum of each window. Ties go to the first maximum in row-major scan order.
void max_pool2d_forward(const Pool2dGeometry& g, int64_t planes, const float* x, float* y);
// dx = dy routed to each window's maximum, found again from x with the same tie rule as the
// forward pass, so no index buffer is kept. dx is overwritten.
void max_pool2d_backward(const Pool2dGeometry& g, int64_t planes, const float* x, const float* dy,
                         float* dx);

// max_pool2d_backward followed by relu_backward (kernels/activation.h) of the ReLU whose output
// x is, in one pass: dy goes to a window's maximum only where it lies in (0, cap).
void max_pool2d_backward_relu(const Pool2dGeometry& g, int64_t planes, const float* x,
                              const float* dy, float* dx, float cap);

// y = the mean of each window.
void avg_pool2d_forward(const Pool2dGeometry& g, int64_t planes, const float* x, float* y);
// dx = dy spread evenly over each window. dx is overwritten.
void avg_pool2d_backward(const Pool2dGeometry& g, int64_t planes, const float* dy, float* dx);

}  // namespace zotrain::kernels
