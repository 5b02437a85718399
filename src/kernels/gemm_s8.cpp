// int8 × int8 → int32 matrix products. The fast kernel has two loop orders, both written so that
// GCC vectorizes the inner loop (16-bit products, 32-bit sums): rows of C as sums of scaled rows
// of B when op(B) is B, and dot products when op(B) is B^T (rows of both operands contiguous).
// x86-64 builds get an AVX2 clone chosen at load time; targets with Helium (MVE) its build of
// both (gemm_s8_mve.cpp); others the baseline code. The active instruction set's kernel
// (kernel_set.h) replaces the dot products where it has one.
#include "kernel_set.h"
#include "kernels/gemm_s8_mve.h"
#include "kernels/int8.h"
#include "target_clones.h"

namespace zotrain::kernels {

namespace {

#if defined(__ARM_FEATURE_MVE)
constexpr auto& gemm_rows = gemm_rows_mve;
constexpr auto& gemm_dots = gemm_dots_mve;
#else
// C[i, :] (+)= Σ_k op(A)[i, k] · B[k, :], four rows of B at a time so that each pass over the
// row of C does four products; zero entries of A (ReLU outputs) are skipped.
ZT_CLONES void gemm_rows(bool trans_a, int64_t m, int64_t n, int64_t k, const int8_t* a,
                         int64_t lda, const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc,
                         bool accumulate) {
  auto at = [&](int64_t i, int64_t p) -> int16_t {
    return trans_a ? a[p * lda + i] : a[i * lda + p];
  };
  for (int64_t i = 0; i < m; ++i) {
    int32_t* __restrict ci = c + i * ldc;
    if (!accumulate)
      for (int64_t j = 0; j < n; ++j) ci[j] = 0;
    int64_t p = 0;
    for (; p + 4 <= k; p += 4) {
      const int16_t a0 = at(i, p), a1 = at(i, p + 1), a2 = at(i, p + 2), a3 = at(i, p + 3);
      if ((a0 | a1 | a2 | a3) == 0) continue;
      const int8_t* __restrict b0 = b + p * ldb;
      const int8_t* __restrict b1 = b0 + ldb;
      const int8_t* __restrict b2 = b1 + ldb;
      const int8_t* __restrict b3 = b2 + ldb;
      for (int64_t j = 0; j < n; ++j)
        ci[j] += static_cast<int32_t>(static_cast<int16_t>(a0 * b0[j])) +
                 static_cast<int16_t>(a1 * b1[j]) + static_cast<int16_t>(a2 * b2[j]) +
                 static_cast<int16_t>(a3 * b3[j]);
    }
    for (; p < k; ++p) {
      const int16_t aip = at(i, p);
      if (aip == 0) continue;
      const int8_t* __restrict bp = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) ci[j] += static_cast<int16_t>(aip * bp[j]);
    }
  }
}

// C[i, j] (+)= Σ_k A[i, k] · B[j, k].
ZT_CLONES void gemm_dots(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                         const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc, bool accumulate) {
  for (int64_t i = 0; i < m; ++i) {
    const int8_t* __restrict ai = a + i * lda;
    for (int64_t j = 0; j < n; ++j) {
      const int8_t* __restrict bj = b + j * ldb;
      int32_t sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += static_cast<int16_t>(ai[p] * bj[p]);
      c[i * ldc + j] = accumulate ? c[i * ldc + j] + sum : sum;
    }
  }
}

#endif

}  // namespace

void gemm_s8(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const int8_t* a,
             int64_t lda, const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc, bool accumulate) {
  if (!trans_b) {
    const auto fast = active_kernels().gemm_s8_nn;
    return (fast ? fast : gemm_rows)(trans_a, m, n, k, a, lda, b, ldb, c, ldc, accumulate);
  }
  if (!trans_a) {
    const auto fast = active_kernels().gemm_s8_nt;
    return (fast ? fast : gemm_dots)(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
  }
  gemm_s8_ref(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

void gemm_s8_ref(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const int8_t* a,
                 int64_t lda, const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc,
                 bool accumulate) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int32_t sum = accumulate ? c[i * ldc + j] : 0;
      for (int64_t p = 0; p < k; ++p)
        sum += static_cast<int32_t>(trans_a ? a[p * lda + i] : a[i * lda + p]) *
               static_cast<int32_t>(trans_b ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = sum;
    }
}

}  // namespace zotrain::kernels
