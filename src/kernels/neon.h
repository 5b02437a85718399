// Internal to src/kernels: the AArch64 kernels the ARM kernel sets (kernel_set.h) point to. The
// int8 A·Bᵀ (gemm_s8_neon.h) is built for plain NEON (namespace neon, gemm_s8_neon.cpp) and with
// the dot-product instructions (namespace neon_dotprod, int8_dotprod.cpp, only called on CPUs
// that have them).
#pragma once

#include <cstdint>

#include "kernels/byte_gather.h"

namespace zotrain::kernels::neon {
// C (+)= op(A) · B (gemm_s8 with op(B) = B) in register tiles of 4 rows by 16 columns
// (gemm_s8_rows_neon.cpp).
void gemm_s8_nn(bool trans_a, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc, bool accumulate);
// C (+)= A · B^T (gemm_s8 with op(A) = A, op(B) = B^T) in 3 x 4 register tiles.
void gemm_s8_nt(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int8_t* b,
                int64_t ldb, int32_t* c, int64_t ldc, bool accumulate);
// philox4x32_run (kernels/philox_run.h) for all the blocks, 8 at a time; returns how many
// (philox_neon.cpp).
int64_t philox4x32_run(uint64_t j0, uint32_t c2, uint32_t c3, uint64_t key, int64_t blocks,
                       uint32_t* out);
// gather_bytes (byte_gather.h) by tbl (byte_gather_simd.cpp).
void gather_bytes(const ByteChunks& chunks, int64_t planes, const int8_t* src, int64_t src_stride,
                  int8_t* dst, int64_t dst_stride);
}  // namespace zotrain::kernels::neon

namespace zotrain::kernels::neon_dotprod {
void gemm_s8_nt(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int8_t* b,
                int64_t ldb, int32_t* c, int64_t ldc, bool accumulate);
}  // namespace zotrain::kernels::neon_dotprod
