// The requantizations on 512-bit vectors, for the "+vnni" kernel sets (AVX-512): the NPU kernels'
// fixed-point requantization (npu.h) of int32 sums and their residual add, and the int8 path's
// stage_s16 and the rounding shift of finish_s16 (int8.h). The AVX2 build's steps
// (requant_s8_avx2.cpp) on 16 lanes, with the last partial vector under a lane mask instead of
// zero-padded copies, and the NPU's clamp in int32 before narrowing. Bit for bit the portable loops
// of npu.cpp and int8.cpp.
#include "kernel_set.h"
#include "kernels/int8.h"
#include "requant_avx512.h"

#if defined(__x86_64__)

#include <immintrin.h>

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics pass _mm512_undefined_epi32() as their unused merge operand, which
// -Wmaybe-uninitialized reports at every call (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace zotrain::kernels::avx512 {

namespace {

// The 16 int32 at p (zero past the mask) plus bias, requantized.
template <bool kWide>
ZT_AVX512_INLINE __m512i requantized(const Requant16& rq, const int32_t* p, __mmask16 k,
                                     __m512i bias) {
  return rq.template lanes<kWide>(_mm512_add_epi32(_mm512_maskz_loadu_epi32(k, p), bias));
}

// Outputs of 64 at a time, then of 16 (the last under a lane mask): lanes(i, k) gives the int32
// of outputs i .. i + 15 (mask k). Four vectors are narrowed by saturating packs (int16, then
// int8: the clamp to [lo, hi] within int8 keeps its result), put back in order by one
// permutation and stored whole (GCC makes a masked narrowing store, vpmovdb to memory, of the
// one-vector form, a third of the kernel's time on Zen 4).
template <class Lanes>
ZT_AVX512_INLINE void narrow_lanes(int64_t n, int32_t lo, int32_t hi, int8_t* y, Lanes&& lanes) {
  const __m512i low = _mm512_set1_epi32(lo), high = _mm512_set1_epi32(hi);
  const __m512i low8 = _mm512_set1_epi8(static_cast<char>(lo)),
                high8 = _mm512_set1_epi8(static_cast<char>(hi));
  // Dword 4L + j of the packs holds vector j's lanes 4L .. 4L + 3.
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i bytes = packs_s8(lanes(i, 0xFFFF), lanes(i + 16, 0xFFFF), lanes(i + 32, 0xFFFF),
                                   lanes(i + 48, 0xFFFF));
    const __m512i in_order = _mm512_permutexvar_epi32(order, bytes);
    _mm512_storeu_si512(y + i, _mm512_min_epi8(_mm512_max_epi8(in_order, low8), high8));
  }
  for (; i < n; i += 16) {
    const __mmask16 k = first16(n - i);
    const __m512i v = _mm512_min_epi32(_mm512_max_epi32(lanes(i, k), low), high);
    _mm_mask_storeu_epi8(y + i, k, _mm512_cvtepi32_epi8(v));
  }
}

// The requantized sums of requantize_s8.
template <bool kWide>
struct RequantizedLanes {
  const Requant16& rq;
  const int32_t* acc;
  __m512i bias;
  ZT_AVX512_INLINE __m512i operator()(int64_t i, __mmask16 k) const {
    return requantized<kWide>(rq, acc + i, k, bias);
  }
};

// requantize_s8 in shift form kWide (the lambda of with_shift_form calls it: a lambda has no
// target of its own to inline narrow_lanes into).
template <bool kWide>
ZT_AVX512 void requantize_lanes(int64_t n, const int32_t* acc, const Requant16& rq, int32_t b,
                                int32_t lo, int32_t hi, int8_t* y) {
  narrow_lanes(n, lo, hi, y, RequantizedLanes<kWide>{rq, acc, _mm512_set1_epi32(b)});
}

// x requantized in rq's shift form, chosen per vector (a branch that always goes one way): the
// residual add's three multipliers would take eight instantiations as template arguments.
ZT_AVX512_INLINE __m512i requantized_any(const Requant16& rq, __m512i x) {
  return rq.wide ? rq.lanes<true>(x) : rq.lanes<false>(x);
}

// 16 int8 at p (zero past the mask) as int32.
ZT_AVX512_INLINE __m512i widened(const int8_t* p, __mmask16 k) {
  return _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(k, p));
}

// add_s8_steps' sums, each multiplier in its own shift form.
struct AddedLanes {
  Requant16 ra, rb, down;
  const int8_t *a, *b;
  ZT_AVX512_INLINE __m512i operator()(int64_t i, __mmask16 k) const {
    const __m512i sum = _mm512_add_epi32(requantized_any(ra, widened(a + i, k)),
                                         requantized_any(rb, widened(b + i, k)));
    return requantized_any(down, sum);
  }
};

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

ZT_AVX512 void add_s8_steps(int64_t n, const int8_t* a, FixedMultiplier ma, const int8_t* b,
                            FixedMultiplier mb, FixedMultiplier down, int32_t lo, int32_t hi,
                            int8_t* y) {
  narrow_lanes(n, lo, hi, y, AddedLanes{Requant16(ma), Requant16(mb), Requant16(down), a, b});
}

ZT_AVX512 void requantize_s8(int64_t n, const int32_t* acc, int32_t bias, FixedMultiplier mult,
                             int32_t lo, int32_t hi, int8_t* y) {
  const Requant16 rq(mult);
  with_shift_form(rq, [&]<bool kWide>(std::bool_constant<kWide>) {
    requantize_lanes<kWide>(n, acc, rq, bias, lo, hi, y);
  });
}

}  // namespace zotrain::kernels::avx512

#endif
