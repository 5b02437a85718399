// The NPU kernels' fixed-point requantization (npu.h) of int32 sums on 512-bit vectors, for the
// "+vnni" kernel sets (AVX-512): the AVX2 build's steps (requant_s8_avx2.cpp) on 16 lanes, with
// the last partial vector under a lane mask instead of zero-padded copies, and the clamp in int32
// before narrowing. Bit for bit the portable loop of npu.cpp.
#include "int8_avx2.h"
#include "kernel_set.h"

#if defined(__x86_64__)

#include <immintrin.h>

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics pass _mm512_undefined_epi32() as their unused merge operand, which
// -Wmaybe-uninitialized reports at every call (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define ZT_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw")))

namespace zotrain::kernels::avx512 {

// Each lane as vector_requant_shifts says, as the AVX2 Requantizer: |x| <= 2^31 and m0 < 2^31
// multiply exactly as unsigned 32 x 32 -> 64 bits (even and odd lanes apart), and the sum stays
// below 2^63.
ZT_AVX512 void requantize_s8(int64_t n, const int32_t* acc, int32_t bias, FixedMultiplier mult,
                             int32_t lo, int32_t hi, int8_t* y) {
  const VectorRequantShifts s = vector_requant_shifts(mult);
  const __m512i m0 = _mm512_set1_epi32(mult.m0), half = _mm512_set1_epi64(s.half);
  const __m128i right = _mm_cvtsi32_si128(s.right), left = _mm_cvtsi32_si128(s.left);
  const __m512i b = _mm512_set1_epi32(bias), low = _mm512_set1_epi32(lo),
                high = _mm512_set1_epi32(hi), zero = _mm512_setzero_si512();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512i x = _mm512_add_epi32(_mm512_maskz_loadu_epi32(k, acc + i), b);
    const __m512i mag = _mm512_abs_epi32(x);
    const __m512i even = _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(mag, m0), half), right);
    const __m512i odd = _mm512_srl_epi64(
        _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(mag, 32), m0), half), right);
    __m512i v =
        _mm512_sll_epi32(_mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32)), left);
    v = _mm512_mask_sub_epi32(v, _mm512_cmplt_epi32_mask(x, zero), zero, v);
    v = _mm512_min_epi32(_mm512_max_epi32(v, low), high);
    // A whole vector narrowed in a register and stored: the masked narrowing store (vpmovdb to
    // memory) GCC makes of the masked form costs the kernel a third of its time on Zen 4.
    if (k == 0xFFFF)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm512_cvtepi32_epi8(v));
    else
      _mm_mask_storeu_epi8(y + i, k, _mm512_cvtepi32_epi8(v));
  }
}

}  // namespace zotrain::kernels::avx512

#endif
