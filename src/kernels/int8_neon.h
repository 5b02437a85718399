// Internal to src/kernels: the AArch64 int8 kernels (gemm_s8_neon.h), built for plain NEON
// (namespace neon, gemm_s8_neon.cpp) and with the dot-product instructions (namespace
// neon_dotprod, int8_dotprod.cpp, only called on CPUs that have them), which the ARM kernel sets
// (kernel_set.h) point to. The two namespaces declare the same three functions:
//
// conv2d_s8_forward from the image's patches as rows and gemm_s8_nt's tiles; `work` needs
// conv2d_s8_direct_work_bytes(g) bytes; and C (+)= A · B^T (gemm_s8 with op(A) = A,
// op(B) = B^T) in 3 x 4 register tiles.
#pragma once

#include <cstdint>

#include "kernels/conv2d.h"

namespace zotrain::kernels::neon {
int64_t conv2d_s8_direct_work_bytes(const Conv2dGeometry& g);
void conv2d_s8_direct(const Conv2dGeometry& g, int64_t images, const int8_t* x, const int8_t* w,
                      int32_t* y, void* work);
void gemm_s8_nt(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int8_t* b,
                int64_t ldb, int32_t* c, int64_t ldc, bool accumulate);
}  // namespace zotrain::kernels::neon

namespace zotrain::kernels::neon_dotprod {
int64_t conv2d_s8_direct_work_bytes(const Conv2dGeometry& g);
void conv2d_s8_direct(const Conv2dGeometry& g, int64_t images, const int8_t* x, const int8_t* w,
                      int32_t* y, void* work);
void gemm_s8_nt(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int8_t* b,
                int64_t ldb, int32_t* c, int64_t ldc, bool accumulate);
}  // namespace zotrain::kernels::neon_dotprod
