// Internal to src/kernels: the AVX2 steps of the NPU's fixed-point requantization (npu.h) that
// requant_s8_avx2.cpp's kernels and the depthwise taps (depthwise_s8_x86.h, built for AVX2 and for
// AVX-512 VNNI) share. Always inlined, so a VNNI caller compiles them with its own target.
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <cstdint>

#include "avx2_target.h"
#include "int8_avx2.h"

namespace zotrain::kernels::avx2 {

// requantize (npu.h) of 8 int32 lanes. The scalar rounding floor((p + half - 1) >> right) of a
// product p = -a < 0 is -((a + half) >> right), so each lane is sign(x) * ((|x| * m0 + half) >>
// right): |x| <= 2^31 and m0 < 2^31 multiply exactly as unsigned 32 x 32 -> 64 bits (even and odd
// lanes apart), and the sum stays below 2^63, where the logical 64-bit shift (AVX2 has no
// arithmetic one) is exact. Multipliers >= 1 shift left instead; below 2^-32, shifting by 64 gives
// 0. Truncation to 32 bits before the sign is the scalar's wrap-around, should a product overflow.
struct Requantizer {
  __m256i m0, half;
  __m128i right, odd_right, left;
  bool wide;
  ZT_AVX2_INLINE explicit Requantizer(FixedMultiplier m) {
    const VectorRequantShifts s = vector_requant_shifts(m);
    wide = s.right >= 32;
    m0 = _mm256_set1_epi32(m.m0);
    half = _mm256_set1_epi64x(s.half);
    right = _mm_cvtsi32_si128(s.right);
    odd_right = _mm_cvtsi32_si128(wide ? s.right - 32 : 0);
    left = _mm_cvtsi32_si128(s.left);
  }
  // The even lanes of v, rounded and shifted right by `by`.
  ZT_AVX2_INLINE __m256i rounded(__m256i v, __m128i by) const {
    return _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(v, m0), half), by);
  }
  // kWide (`wide`, as avx512::Requant16): the odd lanes' result shifted straight into their high
  // half, no left shift (it is 0): 10 operations for 8 lanes instead of 12.
  template <bool kWide>
  ZT_AVX2_INLINE __m256i lanes(__m256i x) const {
    const __m256i mag = _mm256_abs_epi32(x);
    const __m256i even = rounded(mag, right);
    const __m256i odd = kWide ? rounded(_mm256_srli_epi64(mag, 32), odd_right)
                              : _mm256_slli_epi64(rounded(_mm256_srli_epi64(mag, 32), right), 32);
    const __m256i r = _mm256_blend_epi32(even, odd, 0xAA);
    return _mm256_sign_epi32(kWide ? r : _mm256_sll_epi32(r, left), x);
  }
  // Any multiplier.
  ZT_AVX2_INLINE __m256i operator()(__m256i x) const { return lanes<false>(x); }
};

// 16 int32 outputs, lanes 0-3 and 8-11 in `a`, 4-7 and 12-15 in `b` (the order of the 128-bit
// unpacks), clamped to [lo, hi] (within int8) and stored as 16 int8 in order. The int16 saturation
// of the pack keeps every clamp's result.
struct Narrow {
  __m256i lo, hi;
  ZT_AVX2_INLINE Narrow(int32_t l, int32_t h)
      : lo(_mm256_set1_epi16(static_cast<int16_t>(l))),
        hi(_mm256_set1_epi16(static_cast<int16_t>(h))) {}
  ZT_AVX2_INLINE void operator()(__m256i a, __m256i b, int8_t* y) const {
    const __m256i v = _mm256_min_epi16(_mm256_max_epi16(_mm256_packs_epi32(a, b), lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y),
                     _mm_packs_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
  }
};

// Four vectors of int32 as 32 int8 by saturating packs (int16, then int8): 128-bit lane L holds
// lanes 4L .. 4L + 3 of v0, then of v1, v2 and v3 (as avx512::packs_s8).
ZT_AVX2_INLINE __m256i packs_s8(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
  return _mm256_packs_epi16(_mm256_packs_epi32(v0, v1), _mm256_packs_epi32(v2, v3));
}

// 16 int8 as int16.
ZT_AVX2_INLINE __m256i load_s16(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

}  // namespace zotrain::kernels::avx2

#endif
