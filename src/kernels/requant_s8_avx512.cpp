// The requantizations on 512-bit vectors, for the "+vnni" kernel sets (AVX-512): the NPU kernels'
// fixed-point requantization (npu.h) of int32 sums, and the int8 path's stage_s16 and the rounding
// shift of finish_s16 (int8.h). The AVX2 build's steps (requant_s8_avx2.cpp) on 16 lanes, with
// the last partial vector under a lane mask instead of zero-padded copies, and the NPU's clamp in
// int32 before narrowing. Bit for bit the portable loops of npu.cpp and int8.cpp.
#include "int8_avx2.h"
#include "kernel_set.h"
#include "kernels/int8.h"

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

// The first n of 16 lanes (all for n >= 16).
ZT_AVX512 __mmask16 first16(int64_t n) {
  return n >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << n) - 1);
}

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
    const __mmask16 k = first16(n - i);
    const __m512i v =
        _mm512_min_epi32(_mm512_max_epi32(rq.template lanes<kWide>(acc + i, k), low), high);
    _mm_mask_storeu_epi8(y + i, k, _mm512_cvtepi32_epi8(v));
  }
}

// Two vectors' saturating packs (128-bit lanes of a, b, a, b, ...) back in order.
ZT_AVX512 __m512i packed_in_order(__m512i packed) {
  return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), packed);
}

// stage_s16_in_range's rounding to odd of 16 int32 (zero past the mask): magnitudes (|INT32_MIN|
// is 2^31 as unsigned) >> a, ORed with "anything discarded", signed back.
ZT_AVX512 __m512i round_to_odd(const int32_t* p, __mmask16 k, __m128i shift, __m512i below) {
  const __m512i v = _mm512_maskz_loadu_epi32(k, p), mag = _mm512_abs_epi32(v);
  const __mmask16 inexact = _mm512_test_epi32_mask(mag, below);
  const __m512i kept_bits = _mm512_srl_epi32(mag, shift);
  const __m512i kept = _mm512_mask_or_epi32(kept_bits, inexact, kept_bits, _mm512_set1_epi32(1));
  return _mm512_mask_sub_epi32(kept, _mm512_cmplt_epi32_mask(v, _mm512_setzero_si512()),
                               _mm512_setzero_si512(), kept);
}

// round_shift_s16's rounding of 32 int16 (zero past the mask): (|v| + half) >> s, at most 127,
// signed back (magnitudes below 2^15 plus half of at most 2^15 fit in uint16).
ZT_AVX512 __m512i round_shift(const int16_t* p, __mmask32 k, __m512i half, __m128i shift) {
  const __m512i v = _mm512_maskz_loadu_epi16(k, p);
  const __m512i r = _mm512_min_epu16(
      _mm512_srl_epi16(_mm512_add_epi16(_mm512_abs_epi16(v), half), shift), _mm512_set1_epi16(127));
  return _mm512_mask_sub_epi16(r, _mm512_movepi16_mask(v), _mm512_setzero_si512(), r);
}

}  // namespace

ZT_AVX512 int stage_s16(const int32_t* acc, int64_t n, int16_t* stage) {
  __m512i hi = _mm512_setzero_si512(), lo = _mm512_setzero_si512();
  for (int64_t i = 0; i < n; i += 16) {
    const __m512i v = _mm512_maskz_loadu_epi32(first16(n - i), acc + i);
    hi = _mm512_max_epi32(hi, v);
    lo = _mm512_min_epi32(lo, v);
  }
  // In memory (GCC 12's reductions warn as its min and max intrinsics, bug 105593): lo's lanes
  // are at most 0 and hi's at least 0, so their largest magnitude is the values'.
  alignas(64) int32_t lanes[32];
  _mm512_store_si512(lanes, hi);
  _mm512_store_si512(lanes + 16, lo);
  const int range = range_bits(lanes, 32);
  stage_s16_in_range(acc, n, range, stage);
  return range;
}

ZT_AVX512 void stage_s16_in_range(const int32_t* acc, int64_t n, int range, int16_t* stage) {
  const int a = range > 15 ? range - 15 : 0;
  const __m128i shift = _mm_cvtsi32_si128(a);
  const __m512i below = _mm512_set1_epi32(static_cast<int>((uint32_t{1} << a) - 1));
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    _mm512_storeu_si512(stage + i, packed_in_order(_mm512_packs_epi32(
                                       round_to_odd(acc + i, 0xFFFF, shift, below),
                                       round_to_odd(acc + i + 16, 0xFFFF, shift, below))));
  for (; i < n; i += 16)
    _mm256_mask_storeu_epi16(
        stage + i, first16(n - i),
        _mm512_cvtepi32_epi16(round_to_odd(acc + i, first16(n - i), shift, below)));
}

ZT_AVX512 void round_shift_s16(const int16_t* stage, int64_t n, int s, int8_t* out) {
  const __m512i half = _mm512_set1_epi16(static_cast<int16_t>(s > 0 ? 1 << (s - 1) : 0));
  const __m128i shift = _mm_cvtsi32_si128(s);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64)
    _mm512_storeu_si512(out + i, packed_in_order(_mm512_packs_epi16(
                                     round_shift(stage + i, ~__mmask32{0}, half, shift),
                                     round_shift(stage + i + 32, ~__mmask32{0}, half, shift))));
  for (; i < n; i += 32) {
    const __mmask32 k = n - i >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1ull << (n - i)) - 1);
    _mm256_mask_storeu_epi8(out + i, k,
                            _mm512_cvtepi16_epi8(round_shift(stage + i, k, half, shift)));
  }
}

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
