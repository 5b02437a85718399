// Integer kernels of an INT8 NPU (TFLite-style): int8 operands, int32 accumulation and
// requantization of the int32 results to int8 by a fixed-point multiplier, per-tensor symmetric
// scales (zero point 0). One thread; convolutions and linear layers take their int32 sums from
// the int8 path's kernels of the active instruction set (kernels/isa.h), which also has the
// depthwise convolution's taps, the requantization of int32 sums and the residual add; the rest
// is portable C++ written for the compiler to vectorize (an AVX2 clone is picked at load time on
// x86-64). Every set gives the same integers.
#pragma once

#include <cstdint>
#include <vector>

#include "zotrain/kernels/pool.h"

namespace zotrain::kernels {

// A real multiplier M > 0 as M0 * 2^(shift - 31), M0 in [2^30, 2^31).
struct FixedMultiplier {
  int32_t m0 = 0;
  int shift = 0;
};
// InputError unless 0 < M < 2^31 (finite). Multipliers below 2^-32 round every int32 to 0.
FixedMultiplier quantize_multiplier(double m);
// round(x * M0 * 2^(shift - 31)), ties away from zero, computed exactly in 64-bit integers.
inline int32_t requantize(int32_t x, FixedMultiplier m) {
  const int right = 31 - m.shift;
  const int64_t p = static_cast<int64_t>(x) * m.m0;
  if (right <= 0) return static_cast<int32_t>(p << -right);
  if (right > 62) return 0;
  // Arithmetic shift floors; one less before it makes negative ties go away from zero too.
  return static_cast<int32_t>((p + (int64_t{1} << (right - 1)) - (p < 0)) >> right);
}
inline int8_t clamp_s8(int32_t v, int32_t lo, int32_t hi) {
  return static_cast<int8_t>(v < lo ? lo : v > hi ? hi : v);
}

// The requantization of a layer's int32 sums to its int8 output: y = clamp(requantize(bias[o] +
// sum, mult), lo, hi), output channel o's bias (bias may be null: none).
struct Requantization {
  const int32_t* bias;
  FixedMultiplier mult;
  int32_t lo, hi;
};

// y[i] = clamp(round(x[i] / scale), -127, 127) for i < n, in double, ties away from zero (as
// std::round); NaN gives -127: the quantization of the input and of the float master weights.
void quantize_s8(const float* x, int64_t n, double scale, int8_t* y);

// A grouped 2-D convolution over NCHW int8 data, square kernel, stride and zero padding; a
// linear layer is the 1x1 case on a 1x1 image.
struct NpuConvGeometry {
  int64_t in_c, in_h, in_w, out_c, kernel, stride, pad, groups;
  int64_t out_h() const { return (in_h + 2 * pad - kernel) / stride + 1; }
  int64_t out_w() const { return (in_w + 2 * pad - kernel) / stride + 1; }
  // Scratch bytes conv_s8 needs: int32 sums of a few rows and the int8 path's convolution
  // scratch (none for a depthwise convolution, run directly); with `pool`, room for the pooled
  // sums too.
  int64_t work_bytes(const Pool2dGeometry* pool = nullptr) const;
};
// y[n, o] = clamp(requantize(bias[o] + sum w[o, .] * x[n, .], mult), lo, hi) for n < rows.
// w: [out_c, in_c / groups, k, k]; bias may be null; work: work_bytes() of scratch. The sums
// are the int8 path's (kernels/int8.h: conv2d_s8_forward, gemm_s8 for a linear layer), so the
// active instruction set's kernels run them, requantized in their tiles' epilogue where the set
// has such kernels (kernel_set.h); integer sums are exact, so every set gives the same y.
// With `pool` (conv_s8_pools says when), y is instead that max pooling of the output, the
// same values: the int32 sums are pooled first and only the maxima requantized.
void conv_s8(const NpuConvGeometry& g, int64_t rows, const int8_t* x, const int8_t* w,
             const int32_t* bias, FixedMultiplier mult, int32_t lo, int32_t hi, int8_t* y,
             void* work, const Pool2dGeometry* pool = nullptr);
// Whether conv_s8 can pool its output on the int32 sums: requantizing by a multiplier below 1
// and clamping never decrease a value, so the maximum of a window requantized is the window's
// requantized maximum (above 1 the requantization wraps around in int32). An ungrouped
// convolution with a plane (not a linear layer) and a pooling without padding.
bool conv_s8_pools(const NpuConvGeometry& g, FixedMultiplier mult, const Pool2dGeometry& pool);

// Max pooling (k x k, stride, no padding, floor): the scale stays, so no requantization.
void max_pool_s8(int64_t planes, int64_t h, int64_t w, int64_t k, int64_t stride, int64_t pad,
                 const int8_t* x, int8_t* y);
// Average pooling: the int32 window sum requantized by `mult` (1 / (k * k) folded in).
void avg_pool_s8(int64_t planes, int64_t h, int64_t w, int64_t k, int64_t stride, const int8_t* x,
                 FixedMultiplier mult, int8_t* y);
// One output per plane of `size` values: the maximum, or the int32 sum requantized by `mult`
// (1 / size folded in).
void global_max_pool_s8(int64_t planes, int64_t size, const int8_t* x, int8_t* y);
void global_avg_pool_s8(int64_t planes, int64_t size, const int8_t* x, FixedMultiplier mult,
                        int8_t* y);
// y = clamp(round((a * Ma + b * Mb)), lo, hi) for n elements. The two products keep 16 extra
// fraction bits before the one final rounding, so the sum is rounded once (as TFLite's add).
void add_s8(int64_t n, const int8_t* a, FixedMultiplier ma, const int8_t* b, FixedMultiplier mb,
            int32_t lo, int32_t hi, int8_t* y);
// y = clamp(x, lo, hi): a ReLU or ReLU6 that no producer could absorb.
void clamp_s8(int64_t n, const int8_t* x, int32_t lo, int32_t hi, int8_t* y);

// Which kernel set's depthwise taps, requantization and residual add run (the active set's name,
// or "portable" where it has none), for `zotrain info`;
const char* npu_kernels_name();
// and which one's the depthwise convolution's staging plans (byte_gather.h);
const char* npu_staging_kernels_name();
// whether the active set's convolution and linear kernels requantize in their tiles' epilogue
// (where their plans take it), not from int32 sums after.
bool npu_requantizes_in_epilogue();

}  // namespace zotrain::kernels
