// Internal to src/kernels: the two int8 dot-product steps of the x86 int8 kernels
// (conv_s8_x86.h, gemm_s8_x86.h), which are compiled once per instruction set from the same
// source: conv_s8_avx2.cpp and gemm_s8_avx2.cpp for AVX2, int8_vnni.cpp for AVX-512 VNNI on
// 256-bit registers, int8_avxvnni.cpp for AVX-VNNI (the VEX forms on 256 bits). The including
// file defines ZT_S8_NS (the namespace), ZT_S8_TARGET (the target attribute's string),
// ZT_S8_VNNI (0 or 1: AVX-512 VNNI) and ZT_S8_AVX_VNNI (0 or 1: AVX-VNNI, whose build keeps
// every AVX2 layout and tile and swaps only the two steps below). The VNNI kernels are the AVX2
// kernels with each step's instructions replaced by one that computes the same exact integer sums,
// so the logic tested on AVX2 machines is the logic VNNI machines run, and both give the portable
// kernels' bits (tests/kernels/int8_test.cpp runs every set the CPU supports). The convolution
// in quads (vpdpbusd, only in the VNNI build) runs on 512-bit registers: channel rows 6 x 64
// positions, pixel rows 12 pixels x 16 channels (conv_s8_x86.h, the *_512 functions), tested
// wherever the VNNI set runs.
#pragma once

#if !defined(ZT_S8_NS) || !defined(ZT_S8_TARGET) || !defined(ZT_S8_VNNI) || !defined(ZT_S8_AVX_VNNI)
#error \
    "define ZT_S8_NS, ZT_S8_TARGET, ZT_S8_VNNI and ZT_S8_AVX_VNNI before including int8_x86_dot.h"
#endif

#include <immintrin.h>

#include <cstdint>

#include "int8_avx2.h"

#define ZT_S8 __attribute__((target(ZT_S8_TARGET)))
#define ZT_S8_INLINE inline __attribute__((always_inline, target(ZT_S8_TARGET)))

namespace zotrain::kernels::ZT_S8_NS {
namespace {

// acc + the sums of adjacent pairs of int16 products a[2j] b[2j] + a[2j+1] b[2j+1] (vpmaddwd,
// vpaddd; VNNI and AVX-VNNI: vpdpwssd). Exact but for a pair of -32768 x -32768, which int8
// operands never make; both wrap alike on overflow.
ZT_S8_INLINE __m256i dot_pairs_s16(__m256i acc, __m256i a, __m256i b) {
#if ZT_S8_VNNI
  return _mm256_dpwssd_epi32(acc, a, b);
#elif ZT_S8_AVX_VNNI
  return _mm256_dpwssd_avx_epi32(acc, a, b);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
#endif
}

// acc + the sums of four u8 x s8 products (vpmaddubsw, vpmaddwd by ones, vpaddd; VNNI and
// AVX-VNNI: vpdpbusd). Equal for u in [0, 127], where vpmaddubsw's int16 pair sums (at most
// 2 * 127 * 128 = 32512) do not saturate; vpdpbusd never does.
ZT_S8_INLINE __m256i dot_quads_u8s8(__m256i acc, __m256i u, __m256i s) {
#if ZT_S8_VNNI
  return _mm256_dpbusd_epi32(acc, u, s);
#elif ZT_S8_AVX_VNNI
  return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
}

#if ZT_S8_VNNI
// The same two steps on 512-bit registers (the VNNI build's convolution in quads).
ZT_S8_INLINE __m512i dot_pairs_s16(__m512i acc, __m512i a, __m512i b) {
  return _mm512_dpwssd_epi32(acc, a, b);
}
ZT_S8_INLINE __m512i dot_quads_u8s8(__m512i acc, __m512i u, __m512i s) {
  return _mm512_dpbusd_epi32(acc, u, s);
}
#endif

// Stores lanes 0..n-1 of v at dst (0 < n <= 8). VNNI builds have AVX-512 VL's mask registers;
// AVX2's vpmaskmovd store is microcoded and slow on some CPUs, so it is kept for AVX2 only.
ZT_S8_INLINE void store_first_s32(int32_t* dst, int64_t n, __m256i v) {
#if ZT_S8_VNNI
  _mm256_mask_storeu_epi32(dst, static_cast<__mmask8>((1u << n) - 1), v);
#else
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  _mm256_maskstore_epi32(dst, mask, v);
#endif
}

// Transposes the 8 x 8 int32 matrix whose rows are r[0..8) in place (row i lane j becomes
// row j lane i).
ZT_S8_INLINE void transpose_8x8_s32(__m256i (&r)[8]) {
  __m256i a[8], b[8];
#pragma GCC unroll 4
  for (int i = 0; i < 8; i += 2) {
    a[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
    a[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
  }
#pragma GCC unroll 2
  for (int i = 0; i < 8; i += 4)
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      b[i + h] = _mm256_unpacklo_epi64(a[i + h], a[i + 2 + h]);
      b[i + 2 + h] = _mm256_unpackhi_epi64(a[i + h], a[i + 2 + h]);
    }
    // b[0..4) hold columns (0, 4), (2, 6), (1, 5), (3, 7) of rows 0-3 in their low and high
    // 128-bit halves, b[4..8) the same of rows 4-7: joining the halves gives the columns.
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const int src = j == 0 ? 0 : j == 1 ? 2 : j == 2 ? 1 : 3;
    r[j] = _mm256_permute2x128_si256(b[src], b[src + 4], 0x20);
    r[j + 4] = _mm256_permute2x128_si256(b[src], b[src + 4], 0x31);
  }
}

// Whether x[0..n) all lie in [0, 127].
ZT_S8_INLINE bool all_nonneg_s8(const int8_t* x, int64_t n) {
  // The sign bits ORed together: one OR a vector, no branch until the end.
  __m256i any = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    any = _mm256_or_si256(any, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
  int8_t rest = 0;
  for (; i < n; ++i) rest |= x[i];
  return _mm256_movemask_epi8(any) == 0 && rest >= 0;
}

}  // namespace
}  // namespace zotrain::kernels::ZT_S8_NS
