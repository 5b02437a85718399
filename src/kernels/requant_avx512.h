// Internal to src/kernels: the NPU's fixed-point requantization (npu.h) of 16 int32 lanes on
// 512-bit vectors, which requant_s8_avx512.cpp's kernels and the VNNI build's pixel tiles
// (conv_s8_x86.h, in the epilogue of conv2d_s8_direct_requantized) share. Always inlined, so a
// VNNI caller compiles it with its own target.
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "int8_avx2.h"

#define ZT_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw")))
#define ZT_AVX512_INLINE inline __attribute__((always_inline, target("avx512f,avx512vl,avx512bw")))

// GCC 12's AVX-512 intrinsics pass _mm512_undefined_epi32() as their unused merge operand, which
// -Wmaybe-uninitialized and -Wuninitialized report at every call (GCC bug 105593), also where
// these functions are inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace zotrain::kernels::avx512 {

// Each lane as vector_requant_shifts says, as the AVX2 Requantizer (requant_avx2.h): |x| <= 2^31
// and m0 < 2^31 multiply exactly as unsigned 32 x 32 -> 64 bits (even and odd lanes apart), and the
// sum stays below 2^63. kWide (right >= 32, `wide`): the odd lanes' result is shifted straight
// into their high half (by right - 32, the bits below it dropped by the blend) instead of down and
// back up, and there is no left shift (it is 0).
struct Requant16 {
  __m512i m0, half;
  __m128i right, odd_right, left;
  bool wide;
  ZT_AVX512_INLINE explicit Requant16(FixedMultiplier m) {
    const VectorRequantShifts s = vector_requant_shifts(m);
    wide = s.right >= 32;
    m0 = _mm512_set1_epi32(m.m0);
    half = _mm512_set1_epi64(s.half);
    right = _mm_cvtsi32_si128(s.right);
    odd_right = _mm_cvtsi32_si128(wide ? s.right - 32 : 0);
    left = _mm_cvtsi32_si128(s.left);
  }
  template <bool kWide>
  ZT_AVX512_INLINE __m512i lanes(__m512i x) const {
    const __m512i mag = _mm512_abs_epi32(x);
    const __m512i even = _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(mag, m0), half), right);
    __m512i odd = _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(mag, 32), m0), half);
    odd = kWide ? _mm512_srl_epi64(odd, odd_right)
                : _mm512_slli_epi64(_mm512_srl_epi64(odd, right), 32);
    const __m512i blend = _mm512_mask_blend_epi32(0xAAAA, even, odd);
    const __m512i v = kWide ? blend : _mm512_sll_epi32(blend, left);  // wide: left is 0
    return _mm512_mask_sub_epi32(v, _mm512_cmplt_epi32_mask(x, _mm512_setzero_si512()),
                                 _mm512_setzero_si512(), v);
  }
};

// f(std::bool_constant<rq.wide>{}): the shift form as a template argument.
template <class F>
inline void with_shift_form(const Requant16& rq, F&& f) {
  if (rq.wide)
    f(std::true_type{});
  else
    f(std::false_type{});
}

// The first n of 16 lanes (all for n >= 16).
ZT_AVX512_INLINE __mmask16 first16(int64_t n) {
  return n >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << n) - 1);
}

// Four vectors of int32 as 64 int8 by saturating packs (int16, then int8): 128-bit lane L holds
// lanes 4L .. 4L + 3 of v0, then of v1, v2 and v3.
ZT_AVX512_INLINE __m512i packs_s8(__m512i v0, __m512i v1, __m512i v2, __m512i v3) {
  return _mm512_packs_epi16(_mm512_packs_epi32(v0, v1), _mm512_packs_epi32(v2, v3));
}

}  // namespace zotrain::kernels::avx512

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif
