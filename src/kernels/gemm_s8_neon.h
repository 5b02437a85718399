// The AArch64 int8 product C (+)= A · B^T, compiled twice from this source: for plain NEON
// (gemm_s8_neon.cpp: smull + sadalp, the ARMv8.0 route of CPUs without dot products, such as the
// Cortex-A53) and with the ARMv8.2 dot-product instructions
// (int8_dotprod.cpp: sdot). The including file defines ZT_S8_NS (the namespace) and
// ZT_S8_DOTPROD (0 or 1), and for ZT_S8_DOTPROD switches the target on before including this.
// The tiles are gemm_s8_tiles.h's, the x86 builds' source; integer sums are exact, so every
// build gives the portable kernels' bits (tests/kernels/int8_test.cpp runs every set the CPU
// supports).
#pragma once

#if !defined(ZT_S8_NS) || !defined(ZT_S8_DOTPROD)
#error "define ZT_S8_NS and ZT_S8_DOTPROD before including gemm_s8_neon.h"
#endif

#define ZT_S8
#define ZT_S8_INLINE inline __attribute__((always_inline))

namespace zotrain::kernels::ZT_S8_NS {
namespace {

using Sums = int32x4_t;
ZT_S8_INLINE Sums acc_zero() {
  return vdupq_n_s32(0);
}
ZT_S8_INLINE void store_sums(const Sums (&acc)[4], int32_t* out) {
  vst1q_s32(out, vpaddq_s32(vpaddq_s32(acc[0], acc[1]), vpaddq_s32(acc[2], acc[3])));
}

// int16 products of 8 byte pairs (smull, smull2: exact, the largest is 128 * 128), adjacent
// pairs of them added into int32 lanes (sadalp). Adding two products in int16 first (smlal, as
// dot-product fallbacks do) would overflow for -128 * -128 + -128 * -128.
struct Widened {
  static constexpr int kStep = 16;
  // 16 contiguous bytes (8 and zeros above them for K = 8).
  template <int K>
  ZT_S8_INLINE static int8x16_t load(const int8_t* p) {
    if constexpr (K == 16) return vld1q_s8(p);
    return vcombine_s8(vld1_s8(p), vdup_n_s8(0));
  }
  ZT_S8_INLINE static Sums dot(Sums acc, int8x16_t x, int8x16_t w) {
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(x), vget_low_s8(w)));
    return vpadalq_s16(acc, vmull_high_s8(x, w));
  }
};

#if ZT_S8_DOTPROD
// Four byte products added into each int32 lane by one instruction (sdot), exact for all int8.
struct Dot {
  static constexpr int kStep = 16;
  template <int K>
  ZT_S8_INLINE static int8x16_t load(const int8_t* p) {
    static_assert(K == 16);
    return vld1q_s8(p);
  }
  ZT_S8_INLINE static Sums dot(Sums acc, int8x16_t x, int8x16_t w) { return vdotq_s32(acc, x, w); }
};
using Fast = Dot;
#else
using Fast = Widened;
#endif

}  // namespace
}  // namespace zotrain::kernels::ZT_S8_NS

#include "gemm_s8_tiles.h"

namespace zotrain::kernels::ZT_S8_NS {

void gemm_s8_nt(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int8_t* b,
                int64_t ldb, int32_t* c, int64_t ldc, bool accumulate) {
  gemm_nt<Fast>(m, n, k, a, lda, b, ldb, c, ldc, 1, accumulate);
}

}  // namespace zotrain::kernels::ZT_S8_NS

#undef ZT_S8
#undef ZT_S8_INLINE
