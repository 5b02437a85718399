// Internal to src/kernels: the AVX2 kernels of the integer path and the NPU kernels
// (conv_s8_avx2.cpp, gemm_s8_avx2.cpp, pool_s8_avx2.cpp, requant_s8_avx2.cpp, philox_avx2.cpp,
// byte_gather_simd.cpp),
// and the AVX-512 Philox and requantization (philox_avx512.cpp, requant_s8_avx512.cpp), which the
// x86 kernel sets (kernel_set.h) point to.
// Only called on CPUs with AVX2. The AVX-512 VNNI builds of the convolution and A·Bᵀ stay inside
// int8_vnni.cpp (with_vnni_int8).
#pragma once

#include <cstdint>

#include "kernels/byte_gather.h"
#include "kernels/conv2d.h"
#include "kernels/npu.h"
#include "zotrain/kernels/pool.h"

namespace zotrain::kernels {

// requantize (npu.h) as the vector builds compute it, on magnitudes: sign(x) * (((|x| * m0 +
// half) >> right) << left), the product unsigned 32 x 32 -> 64 bits and the shifts logical;
// right = 64 (a multiplier below 2^-32) gives 0.
struct VectorRequantShifts {
  int64_t half;
  int right, left;
};
inline VectorRequantShifts vector_requant_shifts(FixedMultiplier m) {
  const int r = 31 - m.shift;
  return {r > 0 && r <= 62 ? int64_t{1} << (r - 1) : 0,
          r > 62  ? 64
          : r > 0 ? r
                  : 0,
          r < 0 ? -r : 0};
}

}  // namespace zotrain::kernels

namespace zotrain::kernels::avx2 {

// conv2d_s8_forward, reading a padded copy of each image in place of a patch matrix, the
// weights packed into `work` unless weights_key says they are there already; `work` needs
// conv2d_s8_direct_work_bytes(g) bytes.
int64_t conv2d_s8_direct_work_bytes(const Conv2dGeometry& g);
void conv2d_s8_direct(const Conv2dGeometry& g, int64_t images, const int8_t* x, const int8_t* w,
                      int32_t* y, void* work, uint64_t weights_key);
// conv2d_s8_direct with the 2x2 max pooling fused (kernel_set.h), where
// conv2d_s8_direct_pools says it runs: channel rows in pairs.
bool conv2d_s8_direct_pools(const Conv2dGeometry& g, const Pool2dGeometry& pool);
void conv2d_s8_direct_max_pooled(const Conv2dGeometry& g, const Pool2dGeometry& pool,
                                 int64_t images, const int8_t* x, const int8_t* w, int32_t* y,
                                 int32_t* ranges, void* work, uint64_t weights_key);

// linear_s8_forward (kernels/int8.h) in 4 x 16 tiles of u8 x s8 quads (vpmaddubsw) where A is
// nonnegative and k a multiple of 4, returning false (nothing done) elsewhere.
int64_t linear_s8_work_bytes(int64_t n, int64_t k);
bool linear_s8(int64_t m, int64_t n, int64_t k, const int8_t* a, const int8_t* b, int32_t* c,
               void* work, uint64_t weights_key);

// C (+)= A · B^T (gemm_s8 with op(A) = A, op(B) = B^T): rows of both operands contiguous;
// u8 x s8 products (vpmaddubsw) where a scan finds A or B in [0, 127].
void gemm_s8_nt(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int8_t* b,
                int64_t ldb, int32_t* c, int64_t ldc, bool accumulate);

// C (+)= op(A) · B (gemm_s8 with B not transposed) in 4 x 16 register tiles of int16 pairs.
void gemm_s8_nn(bool trans_a, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc, bool accumulate);

// gather_bytes (byte_gather.h) by pshufb (byte_gather_simd.cpp).
void gather_bytes(const ByteChunks& chunks, int64_t planes, const int8_t* src, int64_t src_stride,
                  int8_t* dst, int64_t dst_stride);

// int8 max pooling, 2x2 windows of stride 2, for out_w >= 4, and its backward.
void max_pool_2x2_s8(const Pool2dGeometry& g, int64_t planes, const int8_t* x, int8_t* y);
void max_pool_2x2_s8_backward(const Pool2dGeometry& g, int64_t planes, const int8_t* x,
                              const int8_t* dy, int8_t* dx);

// stage_s16 and stage_s16_in_range (kernels/int8.h), and the int16 -> int8 rounding shift of
// finish_s16.
int stage_s16(const int32_t* acc, int64_t n, int16_t* stage);
void stage_s16_in_range(const int32_t* acc, int64_t n, int range, int16_t* stage);
void round_shift_s16(const int16_t* stage, int64_t n, int s, int8_t* out);

// The NPU kernels' requantize_s8, depthwise_taps_s8 and add_s8_steps (kernel_set.h).
void requantize_s8(int64_t n, const int32_t* acc, int32_t bias, FixedMultiplier mult, int32_t lo,
                   int32_t hi, int8_t* y);
void depthwise_taps_s8(int64_t n, int taps, const int8_t* w, const int64_t* off, const int8_t* in,
                       int32_t bias, FixedMultiplier mult, int32_t lo, int32_t hi, int8_t* y);
void add_s8_steps(int64_t n, const int8_t* a, FixedMultiplier ma, const int8_t* b,
                  FixedMultiplier mb, FixedMultiplier down, int32_t lo, int32_t hi, int8_t* y);
// The NPU's quantize_s8 (npu.h).
void quantize_s8(const float* x, int64_t n, double scale, int8_t* y);

// philox4x32_run (kernels/philox_run.h) for all the blocks, 8 at a time; returns how many.
int64_t philox4x32_run(uint64_t j0, uint32_t c2, uint32_t c3, uint64_t key, int64_t blocks,
                       uint32_t* out);

}  // namespace zotrain::kernels::avx2

namespace zotrain::kernels::avx512 {

// The same on 512-bit registers (AVX-512F), 16 blocks at a time; for the sets that require
// AVX-512.
int64_t philox4x32_run(uint64_t j0, uint32_t c2, uint32_t c3, uint64_t key, int64_t blocks,
                       uint32_t* out);
// requantize_s8 and add_s8_steps on 16 lanes (requant_s8_avx512.cpp).
void requantize_s8(int64_t n, const int32_t* acc, int32_t bias, FixedMultiplier mult, int32_t lo,
                   int32_t hi, int8_t* y);
void add_s8_steps(int64_t n, const int8_t* a, FixedMultiplier ma, const int8_t* b,
                  FixedMultiplier mb, FixedMultiplier down, int32_t lo, int32_t hi, int8_t* y);
// stage_s16, stage_s16_in_range and round_shift_s16 on 512 bits (requant_s8_avx512.cpp).
int stage_s16(const int32_t* acc, int64_t n, int16_t* stage);
void stage_s16_in_range(const int32_t* acc, int64_t n, int range, int16_t* stage);
void round_shift_s16(const int16_t* stage, int64_t n, int s, int8_t* out);

}  // namespace zotrain::kernels::avx512
