#include "kernels/gemm_s8_mve.h"

#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>

namespace zotrain::kernels {

// Tails are predicated (vctp): inactive lanes neither load nor store.
void gemm_rows_mve(bool trans_a, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                   const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc, bool accumulate) {
  auto at = [&](int64_t i, int64_t p) -> int32_t {
    return trans_a ? a[p * lda + i] : a[i * lda + p];
  };
  for (int64_t i = 0; i < m; ++i) {
    int32_t* ci = c + i * ldc;
    if (!accumulate)
      for (int64_t j = 0; j < n; ++j) ci[j] = 0;
    int64_t p = 0;
    for (; p + 4 <= k; p += 4) {
      const int32_t a0 = at(i, p), a1 = at(i, p + 1), a2 = at(i, p + 2), a3 = at(i, p + 3);
      if ((a0 | a1 | a2 | a3) == 0) continue;
      const int8_t* b0 = b + p * ldb;
      const int8_t *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
      for (int64_t j = 0; j < n; j += 4) {
        const mve_pred16_t live = vctp32q(static_cast<uint32_t>(n - j));
        int32x4_t acc = vldrwq_z_s32(ci + j, live);
        acc = vmlaq_n_s32(acc, vldrbq_z_s32(b0 + j, live), a0);
        acc = vmlaq_n_s32(acc, vldrbq_z_s32(b1 + j, live), a1);
        acc = vmlaq_n_s32(acc, vldrbq_z_s32(b2 + j, live), a2);
        acc = vmlaq_n_s32(acc, vldrbq_z_s32(b3 + j, live), a3);
        vstrwq_p_s32(ci + j, acc, live);
      }
    }
    for (; p < k; ++p) {
      const int32_t aip = at(i, p);
      if (aip == 0) continue;
      const int8_t* bp = b + p * ldb;
      for (int64_t j = 0; j < n; j += 4) {
        const mve_pred16_t live = vctp32q(static_cast<uint32_t>(n - j));
        const int32x4_t acc = vldrwq_z_s32(ci + j, live);
        vstrwq_p_s32(ci + j, vmlaq_n_s32(acc, vldrbq_z_s32(bp + j, live), aip), live);
      }
    }
  }
}

void gemm_dots_mve(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int8_t* b,
                   int64_t ldb, int32_t* c, int64_t ldc, bool accumulate) {
  for (int64_t i = 0; i < m; ++i) {
    const int8_t* ai = a + i * lda;
    for (int64_t j = 0; j < n; ++j) {
      const int8_t* bj = b + j * ldb;
      int32_t sum = 0;
      for (int64_t p = 0; p < k; p += 16) {
        const mve_pred16_t live = vctp8q(static_cast<uint32_t>(k - p));
        sum = vmladavaq_p_s8(sum, vldrbq_z_s8(ai + p, live), vldrbq_z_s8(bj + p, live), live);
      }
      c[i * ldc + j] = accumulate ? c[i * ldc + j] + sum : sum;
    }
  }
}

}  // namespace zotrain::kernels

#endif
