// f32 matrix multiply, row-major: C = alpha * op(A) * op(B) + beta * C, with op(A) M x K and
// op(B) K x N. Each element of C sums over k in increasing order whatever the call's M and N,
// so splitting a product into row or column blocks (threads) never changes the result.
#pragma once

#include <cstdint>

namespace zotrain::kernels {

void gemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
              const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
              int64_t ldc);

}  // namespace zotrain::kernels
