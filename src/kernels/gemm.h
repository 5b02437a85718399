// f32 matrix multiply, row-major: C = alpha * op(A) * op(B) + beta * C, with op(A) M x K and
// op(B) K x N. C is not read when beta == 0.
#pragma once

#include <cstdint>

namespace zotrain::kernels {

// The fast kernel for the active instruction set (isa.h): register tiles over packed panels of
// op(B). Each element of C is computed from its row of op(A), its column of op(B) and its old
// value by the same operations whatever M and N, so splitting a product into row or column
// blocks (threads) never changes the result.
void gemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
              const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
              int64_t ldc);

// The kernel gemm_f32 runs, e.g. "avx2+fma 6x16 tiles".
const char* gemm_f32_kernel_name();

// The portable reference the fast kernel is tested against: plain loops, each element summing
// over k in increasing order.
void gemm_f32_ref(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                  const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                  int64_t ldc);

}  // namespace zotrain::kernels
