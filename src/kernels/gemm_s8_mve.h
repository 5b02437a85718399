// Internal to src/kernels: Helium (MVE) builds of gemm_s8.cpp's two loop orders, for Armv8.1-M
// cores with the integer vector extension (Cortex-M55, M85): the same exact integer sums as the
// portable loops, so the same bits. Compiled in only where the target has MVE.
#pragma once

#include <cstdint>

namespace zotrain::kernels {

#if defined(__ARM_FEATURE_MVE)
// C[i, :] (+)= Σ_k op(A)[i, k] · B[k, :]: four int8 columns widened to int32 lanes per
// multiply-accumulate, four rows of B per pass over C's row, zero entries of A skipped.
void gemm_rows_mve(bool trans_a, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                   const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc, bool accumulate);
// C[i, j] (+)= Σ_k A[i, k] · B[j, k]: 16 int8 products per multiply-accumulate-across.
void gemm_dots_mve(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int8_t* b,
                   int64_t ldb, int32_t* c, int64_t ldc, bool accumulate);
#endif

}  // namespace zotrain::kernels
