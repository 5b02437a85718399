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

namespace {

// Each lane as vector_requant_shifts says, as the AVX2 Requantizer (requant_avx2.h): |x| <= 2^31
// and m0 < 2^31 multiply exactly as unsigned 32 x 32 -> 64 bits (even and odd lanes apart), and the
// sum stays below 2^63. kWide (right >= 32): the odd lanes' result is shifted straight into their
// high half (by right - 32, the bits below it dropped by the blend) instead of down and back up.
struct Requant16 {
  __m512i m0, half, b;
  __m128i right, odd_right, left;
  template <bool kWide>
  ZT_AVX512 __m512i lanes(const int32_t* p, __mmask16 k) const {
    const __m512i x = _mm512_add_epi32(_mm512_maskz_loadu_epi32(k, p), b);
    const __m512i mag = _mm512_abs_epi32(x);
    const __m512i even = _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(mag, m0), half), right);
    __m512i odd = _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(mag, 32), m0), half);
    odd = kWide ? _mm512_srl_epi64(odd, odd_right)
                : _mm512_slli_epi64(_mm512_srl_epi64(odd, right), 32);
    const __m512i v = _mm512_sll_epi32(_mm512_mask_blend_epi32(0xAAAA, even, odd), left);
    return _mm512_mask_sub_epi32(v, _mm512_cmplt_epi32_mask(x, _mm512_setzero_si512()),
                                 _mm512_setzero_si512(), v);
  }
};

// 64 outputs at a time: four vectors narrowed by saturating packs (int16, then int8: the clamp
// to [lo, hi] within int8 keeps its result), put back in order by one permutation and stored
// whole (GCC makes a masked narrowing store, vpmovdb to memory, of the one-vector form, a third
// of the kernel's time on Zen 4); the rest 16 at a time, the last under a lane mask.
template <bool kWide>
ZT_AVX512 void requantize_lanes(int64_t n, const int32_t* acc, const Requant16& rq, int32_t lo,
                                int32_t hi, int8_t* y) {
  const __m512i low = _mm512_set1_epi32(lo), high = _mm512_set1_epi32(hi);
  const __m512i low8 = _mm512_set1_epi8(static_cast<char>(lo)),
                high8 = _mm512_set1_epi8(static_cast<char>(hi));
  // Dword 4L + j of the packs holds vector j's lanes 4L .. 4L + 3.
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i v0 = rq.template lanes<kWide>(acc + i, 0xFFFF),
                  v1 = rq.template lanes<kWide>(acc + i + 16, 0xFFFF),
                  v2 = rq.template lanes<kWide>(acc + i + 32, 0xFFFF),
                  v3 = rq.template lanes<kWide>(acc + i + 48, 0xFFFF);
    const __m512i bytes =
        _mm512_packs_epi16(_mm512_packs_epi32(v0, v1), _mm512_packs_epi32(v2, v3));
    const __m512i in_order = _mm512_permutexvar_epi32(order, bytes);
    _mm512_storeu_si512(y + i, _mm512_min_epi8(_mm512_max_epi8(in_order, low8), high8));
  }
  for (; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512i v =
        _mm512_min_epi32(_mm512_max_epi32(rq.template lanes<kWide>(acc + i, k), low), high);
    _mm_mask_storeu_epi8(y + i, k, _mm512_cvtepi32_epi8(v));
  }
}

}  // namespace

ZT_AVX512 void requantize_s8(int64_t n, const int32_t* acc, int32_t bias, FixedMultiplier mult,
                             int32_t lo, int32_t hi, int8_t* y) {
  const VectorRequantShifts s = vector_requant_shifts(mult);
  const bool wide = s.right >= 32;
  const Requant16 rq{_mm512_set1_epi32(mult.m0),
                     _mm512_set1_epi64(s.half),
                     _mm512_set1_epi32(bias),
                     _mm_cvtsi32_si128(s.right),
                     _mm_cvtsi32_si128(wide ? s.right - 32 : 0),
                     _mm_cvtsi32_si128(s.left)};
  if (wide) return requantize_lanes<true>(n, acc, rq, lo, hi, y);
  requantize_lanes<false>(n, acc, rq, lo, hi, y);
}

}  // namespace zotrain::kernels::avx512

#endif
