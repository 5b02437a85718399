// Batch normalization over one contiguous run of a channel's values (a plane of one image).
// The sums are in double, in eight interleaved partial sums added in order at the end: the
// loops vectorize (one running sum would be a chain of dependent additions) and the result
// depends only on the run.
#pragma once

#include <bit>
#include <cstdint>

namespace zotrain::kernels {

// One pass over the run: the sums of x[i] - pivot and of (x[i] - pivot)^2, each term exact in
// double (a difference of two floats, and its square, fit in 53 bits). With a pivot among the
// values the variance sq / n - (sum / n)^2 then keeps its precision.
struct DeviationSums {
  double sum = 0, sq = 0;
};
DeviationSums deviation_sums_f64(int64_t n, const float* x, float pivot);
// The sums of deviation_sums_f64 over `blocks` blocks of kRunLanes runs of n floats (run k of
// block b at x + b * block_stride + k * stride, around pivot[k]): out[k] = the sums over the
// blocks, in order from zero, of run k's results, bit for bit (a channel's statistics over the
// images). The runs share the loop, a double lane each, each lane the one-run loop's additions
// in its order. For small planes (2x2 is 4 values), where a call per run costs more than its
// sums.
constexpr int kRunLanes = 4;
void deviation_sums_f64_runs(int64_t n, int64_t blocks, const float* x, int64_t stride,
                             int64_t block_stride, const float* pivot, DeviationSums* out);
// The ReLU after batch norm, seen from its backward pass: the gradient passes where the ReLU's
// input, y = scale * (x - mean) + shift as scale_shift computes it, is in (0, cap): that is
// relu_backward on scale_shift's output, bit for bit, without reading it. Gating dy by x lets
// batch norm's backward pass take the ReLU's, one pass over dy and x instead of three.
struct ReluGate {
  float mean, scale, shift, cap;
  // dy where the gate passes x, else +0 (relu_backward's zero), by a mask rather than a branch:
  // the loops calling it then vectorize.
  [[gnu::always_inline]] float gated(float x, float dy) const {
    const float y = scale * (x - mean) + shift;
    const uint32_t keep = 0u - static_cast<uint32_t>((y > 0.0f) & (y < cap));
    return std::bit_cast<float>(std::bit_cast<uint32_t>(dy) & keep);
  }
};
// One pass over the run: the sums of g[i] and of g[i] * (x[i] - mean), where g is dy, or with a
// gate dy where the gate passes x and 0 elsewhere.
struct GradientSums {
  double dy = 0, dy_dev = 0;
};
GradientSums gradient_sums_f64(int64_t n, const float* dy, const float* x, double mean,
                               const ReluGate* gate = nullptr);
// gradient_sums_f64 likewise (dy and x at the same offsets, around mean[k], gated by gate[k]
// when gate is not null).
void gradient_sums_f64_runs(int64_t n, int64_t blocks, const float* dy, const float* x,
                            int64_t stride, int64_t block_stride, const double* mean,
                            GradientSums* out, const ReluGate* gate = nullptr);
// y[i] = scale * (x[i] - mean) + shift (x and y may alias); with relu_cap > 0, followed by
// relu_value(., relu_cap) (kernels/activation.h), bit for bit relu_forward on the result.
void scale_shift(int64_t n, const float* x, float mean, float scale, float shift, float* y,
                 float relu_cap = 0.0f);
// y[i] = scale[i] * (x[i] - mean[i]) + shift[i]: scale_shift's result, bit for bit, with a
// parameter per element (a block of small planes with each plane's channel's parameters).
void scale_shift_each(int64_t n, const float* x, const float* mean, const float* scale,
                      const float* shift, float* y, float relu_cap = 0.0f);
// dx[i] = scale * (g[i] - mean_dy - (x[i] - mean) * inv_std * mean_dy_xhat), in double: the
// input gradient of batch normalization with the batch's statistics (g: dy, gated as in
// gradient_sums_f64).
void batch_norm_backward_data(int64_t n, const float* x, const float* dy, double mean,
                              double inv_std, double scale, double mean_dy, double mean_dy_xhat,
                              float* dx, const ReluGate* gate = nullptr);

}  // namespace zotrain::kernels
