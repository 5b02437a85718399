// Portable reference GEMM. Transposed operands are handled by index arithmetic; the inner loop
// runs over contiguous columns of B and C so that the compiler can vectorize it.
#include "kernels/gemm.h"

namespace zotrain::kernels {

void gemm_f32_ref(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                  const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                  int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    if (beta == 0.0f)
      for (int64_t j = 0; j < n; ++j) ci[j] = 0.0f;
    else if (beta != 1.0f)
      for (int64_t j = 0; j < n; ++j) ci[j] *= beta;
    for (int64_t p = 0; p < k; ++p) {
      float aip = alpha * (trans_a ? a[p * lda + i] : a[i * lda + p]);
      if (!trans_b) {
        const float* bp = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) ci[j] += aip * bp[j];
      } else {
        for (int64_t j = 0; j < n; ++j) ci[j] += aip * b[j * ldb + p];
      }
    }
  }
}

}  // namespace zotrain::kernels
