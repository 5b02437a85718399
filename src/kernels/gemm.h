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

// A linear layer's parameter gradient for outputs [o0, o1) over `rows` examples: dW = dy^T x
// and db = the column sums of dy, with dy rows of `out` and x rows of `in`; dw and db point at
// output o0's row. `accumulate` adds to them (BP's gradient buffers), else overwrites them.
// Each element sums over the rows in order, so blocks of outputs (threads) give the same bits.
inline void linear_param_grad_f32(const float* dy, int64_t out, const float* x, int64_t in,
                                  int64_t rows, int64_t o0, int64_t o1, bool accumulate, float* dw,
                                  float* db) {
  gemm_f32(true, false, o1 - o0, in, rows, 1.0f, dy + o0, out, x, in, accumulate ? 1.0f : 0.0f, dw,
           in);
  if (!accumulate)
    for (int64_t o = 0; o < o1 - o0; ++o) db[o] = 0.0f;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = o0; o < o1; ++o) db[o - o0] += dy[r * out + o];
}

}  // namespace zotrain::kernels
