// Internal to the AVX2 int8 kernels (gemm_s8_avx2.cpp, conv_s8_avx2.cpp): the two ways they
// multiply int8 operands x (activations) and w into int32 sums, one 32-bit lane summing kGroup
// products. Integer sums are exact either way, so both give the portable kernels' results bit
// for bit; Unsigned does the same work in fewer instructions (no widening, half the adds and
// loads) but only for x in [0, 127] (all_nonneg_s8).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "avx2_target.h"

namespace zotrain::kernels::avx2 {

ZT_AVX2_INLINE __m256i broadcast4(const void* p) {
  int32_t v;
  __builtin_memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

// Bytes sign-extended to int16, pairs of products summed into int32 by vpmaddwd, exact for all
// of -128..127.
struct Widened {
  static constexpr int kGroup = 2;
  using Elem = int16_t;  // an operand element held in memory as the multiply takes it
  // 16 contiguous bytes (8 and zeros above them for K = 8) as one operand vector.
  template <int K>
  ZT_AVX2_INLINE static __m256i load(const int8_t* p) {
    if constexpr (K == 16)
      return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  // The groups of taps t[0], t[1] of 16 positions x + t[u] + q: lo holds q = 0-3, 8-11, hi
  // q = 4-7, 12-15 (vpunpck's lane order).
  ZT_AVX2_INLINE static void gather16(const int8_t* x, const int32_t* t, __m256i& lo, __m256i& hi) {
    const __m256i x0 = load<16>(x + t[0]), x1 = load<16>(x + t[1]);
    lo = _mm256_unpacklo_epi16(x0, x1), hi = _mm256_unpackhi_epi16(x0, x1);
  }
  ZT_AVX2_INLINE static __m256i madd(__m256i x, __m256i w) { return _mm256_madd_epi16(x, w); }
};

// x's bytes taken as unsigned by vpmaddubsw (u8 x s8 -> int16 sums of pairs), then pairs of those
// summed into int32 by vpmaddwd with ones. Exact for x in [0, 127]: a pair sum is at most
// 2 * 127 * 128 = 32512 in size, short of vpmaddubsw's saturation at 32767 (which x up to 255
// would reach).
struct Unsigned {
  static constexpr int kGroup = 4;
  using Elem = int8_t;
  // 32 contiguous bytes (16 and zeros above them for K = 16).
  template <int K>
  ZT_AVX2_INLINE static __m256i load(const int8_t* p) {
    if constexpr (K == 32) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm256_zextsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  // As Widened's, for the groups of taps t[0..3].
  ZT_AVX2_INLINE static void gather16(const int8_t* x, const int32_t* t, __m256i& lo, __m256i& hi) {
    __m128i v[4];
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) v[u] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + t[u]));
    // Pairs of taps 0, 1 and of taps 2, 3, positions 0-7 in the low lane and 8-15 in the high.
    const __m256i p01 =
        _mm256_set_m128i(_mm_unpackhi_epi8(v[0], v[1]), _mm_unpacklo_epi8(v[0], v[1]));
    const __m256i p23 =
        _mm256_set_m128i(_mm_unpackhi_epi8(v[2], v[3]), _mm_unpacklo_epi8(v[2], v[3]));
    lo = _mm256_unpacklo_epi16(p01, p23), hi = _mm256_unpackhi_epi16(p01, p23);
  }
  ZT_AVX2_INLINE static __m256i madd(__m256i x, __m256i w) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(x, w), _mm256_set1_epi16(1));
  }
};

}  // namespace zotrain::kernels::avx2
