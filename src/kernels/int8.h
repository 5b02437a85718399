// Integer kernels of NITI-style int8 training: int8 × int8 → int32 products, the shifts that
// bring accumulators back to int8, and int8 ReLU and max-pooling. Integer arithmetic only (the
// files are also compiled with floating point disabled, see CMakeLists.txt), so the results are
// exact and identical on every machine and for every split over threads.
#pragma once

#include <cstdint>

#include "kernels/conv2d.h"
#include "zotrain/kernels/pool.h"

namespace zotrain::kernels {

// Bits of the largest magnitude: 0 for all zeros, 7 for 64..127, 8 for 128..255 (floor(log2)
// + 1). NITI's ceil(log2 max) differs at powers of two, where it maps 1 to 0 bits (dropping a
// unit gradient) and 128 to 7 (overflowing int8); see docs/design.md.
int range_bits(const int32_t* x, int64_t n);
int range_bits(const int64_t* x, int64_t n);

// x / 2^s rounded to nearest, halves away from zero (s >= 0; s = 0 returns x).
int64_t round_shift(int64_t x, int s);
// x / 2^s rounded pseudo-stochastically (NITI's PstoShift): the s discarded bits of |x| are split
// into a high half and a low half (the low half doubled when s is odd, so both have the same
// width); |x| rounds up when high > low. The low bits play the random number, so no RNG is needed
// and the result is deterministic.
int64_t psto_shift(int64_t x, int s);

inline int8_t clip_s8(int64_t v) {
  return static_cast<int8_t>(v > 127 ? 127 : (v < -127 ? -127 : v));
}

// w[i] = clip_s8(w[i] - psto_shift(acc[i], s)) for i < n (s >= 0): NITI's move of int8 weights by
// int32 sums, in one vectorized pass.
void subtract_psto_shifted(const int32_t* acc, int64_t n, int s, int8_t* w);

enum class Rounding { kNearest, kPseudoStochastic };

// Brings accumulators to at most `bits` bits: s = max(range_bits(acc) - bits, 0),
// out[i] = clip(shift(acc[i], s)) to ±127. Returns s (the exponent grows by s).
int requantize(const int32_t* acc, int64_t n, int bits, Rounding r, int8_t* out);
int requantize(const int64_t* acc, int64_t n, int bits, Rounding r, int8_t* out);

// Requantization of a tensor produced row by row, without int32 storage for the whole tensor (the
// largest buffer of an int8 step otherwise): stage_s16 rounds one row's int32 accumulators to odd
// (the last kept bit ORed with "anything discarded") at 15 bits into int16 and returns the row's
// range_bits; finish_s16 then brings every row to int8 with the one shift of the whole tensor,
// max(max range - bits, 0). Rounding to odd with at least two spare bits makes the two roundings
// equal to one round-to-nearest of the int32 values, so the result is bit for bit requantize's
// (kNearest) on the whole tensor. bits must be at most 13.
int stage_s16(const int32_t* acc, int64_t n, int16_t* stage);
// `floor`: a range the tensor's is at least (the other ranks' rows of a distributed batch).
int finish_s16(const int16_t* stage, int64_t n, int64_t rows, const int32_t* ranges, int bits,
               int8_t* out, int floor = 0);
// stage_s16 for values taken from a row whose range_bits is `range` (at least theirs): each is
// rounded as in that row, and finish_s16 takes `range` as the row's (a max pooling of the row,
// which commutes with the monotone roundings).
void stage_s16_in_range(const int32_t* acc, int64_t n, int range, int16_t* stage);

// C = op(A) · op(B) in int32, row-major, op(A) M×K and op(B) K×N. With `accumulate`, C += instead.
// The fast kernel: each element is the exact integer sum, so any blocking gives the same C.
void gemm_s8(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const int8_t* a,
             int64_t lda, const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc, bool accumulate);
// Plain loops, the reference the fast kernel is tested against.
void gemm_s8_ref(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const int8_t* a,
                 int64_t lda, const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc,
                 bool accumulate);

// Convolution of `images` NCHW int8 images by int8 weights [out_c, in_c, k, k], no bias
// (NITI's layers have none). `work` needs conv2d_s8_work_bytes(g) bytes.
int64_t conv2d_s8_work_bytes(const Conv2dGeometry& g);
// What conv2d_s8_forward alone needs (layers trained without backprop): its int8 patch matrix or
// a direct kernel's scratch, in whichever compiled set.
int64_t conv2d_s8_forward_work_bytes(const Conv2dGeometry& g);
// y = w * x (int32, [images, out_c, out_h, out_w]; a few images at a time keep the buffer small).
// The active instruction set's direct kernel where it has one, else patch matrices.
// `weights_key` (from new_weights_key, or 0) names w as it is now: a call with the key of the
// last call on the same `work` and the same g takes the weights that call packed into it, where
// the kernel packs them (the blocks of one pass pack once per worker).
void conv2d_s8_forward(const Conv2dGeometry& g, int64_t images, const int8_t* x, const int8_t* w,
                       int32_t* y, void* work, uint64_t weights_key = 0);
// conv2d_s8_forward followed by max_pool2d_s32_forward of each image's planes (pool: 2x2 windows
// of stride 2 over the convolution's whole output planes, both sides even): y gets images x
// [out_c, pool.out_plane()] and, with `ranges`, ranges[n] the range_bits of image n's
// convolution outputs (before the pooling). Where conv2d_s8_pools(g, pool) says so, in one
// pass: the active set's kernel pools the tiles' sums before storing them, in `work` of
// conv2d_s8_forward's size; elsewhere the caller runs the two.
bool conv2d_s8_pools(const Conv2dGeometry& g, const Pool2dGeometry& pool);
void conv2d_s8_forward_max_pooled(const Conv2dGeometry& g, const Pool2dGeometry& pool,
                                  int64_t images, const int8_t* x, const int8_t* w, int32_t* y,
                                  int32_t* ranges, void* work, uint64_t weights_key = 0);
// C = A · B^T for a linear layer's forward: A [m, k] the input rows, B [n, k] the weights, C
// [m, n] (gemm_s8's sums). `work` needs linear_s8_work_bytes(n, k) bytes; weights_key as for
// conv2d_s8_forward. The VNNI sets pack B into work and run it as pixel rows of 1x1 images where
// A is nonnegative (ReLU outputs) and k a multiple of 4; elsewhere gemm_s8.
int64_t linear_s8_work_bytes(int64_t n, int64_t k);
void linear_s8_forward(int64_t m, int64_t n, int64_t k, const int8_t* a, const int8_t* b,
                       int32_t* c, void* work, uint64_t weights_key = 0);
// A key no other call of this process has had (never 0).
uint64_t new_weights_key();
// What the int8 kernels of the active instruction set run, e.g. "avx2: conv2d direct 6x16
// tiles, ...".
const char* int8_kernels_name();
// dx = dL/dx for int8 dy (int32, overwritten).
void conv2d_s8_backward_data(const Conv2dGeometry& g, int64_t images, const int8_t* dy,
                             const int8_t* w, int32_t* dx, void* work);
// dw += Σ over images of dy * im2col(x)^T (int64: large batches would overflow int32), the
// images in products of conv2d_s8_weight_gradient_images(g) at a time.
int64_t conv2d_s8_weight_gradient_images(const Conv2dGeometry& g);
void conv2d_s8_backward_weight(const Conv2dGeometry& g, int64_t images, const int8_t* x,
                               const int8_t* dy, int64_t* dw, void* work);

// y = max(x, 0).
void relu_s8(const int8_t* x, int8_t* y, int64_t n);
// dx = dy where y > 0, else 0 (dx may equal dy).
void relu_s8_backward(const int8_t* y, const int8_t* dy, int8_t* dx, int64_t n);
// Max pooling with the tie rule of the f32 kernel (first maximum in row-major order). Where windows
// overlap, the errors routed to one pixel add with saturation at ±127.
void max_pool2d_s8_forward(const Pool2dGeometry& g, int64_t planes, const int8_t* x, int8_t* y);
void max_pool2d_s8_backward(const Pool2dGeometry& g, int64_t planes, const int8_t* x,
                            const int8_t* dy, int8_t* dx);
// Max pooling of int32 accumulators: a convolution's fused pooling, before the requantization.
// Returns range_bits(x, planes * in_plane), found in the same pass where it can be; without
// `range`, 0 (the NPU's requantization needs no range).
int max_pool2d_s32_forward(const Pool2dGeometry& g, int64_t planes, const int32_t* x, int32_t* y,
                           bool range = true);

}  // namespace zotrain::kernels
