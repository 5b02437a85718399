// The AVX2 requantization of the int8 path: stage_s16 (range, then round to odd into int16) and
// the int16 -> int8 rounding shift of finish_s16, 8 or 32 lanes at a time. A row's last partial
// vector goes through a zero-padded copy (zeros change neither the range nor other lanes), so
// every element takes the same vector operations. Bit for bit the portable loops of int8.cpp.
#include <bit>

#include "int8_avx2.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include "avx2_target.h"

namespace zotrain::kernels::avx2 {

namespace {

// Calls fn(in, out) for each vector of L elements of in[0, n) and out[0, n) (out may be null),
// the last one through zero-padded copies of L elements.
template <int L, typename In, typename Out, typename Fn>
ZT_AVX2_INLINE void for_each_vector(const In* in, int64_t n, Out* out, Fn& fn) {
  int64_t i = 0;
  for (; i + L <= n; i += L) fn(in + i, out ? out + i : out);
  if (i == n) return;
  alignas(32) In tail_in[L] = {};
  alignas(32) Out tail_out[L];
  __builtin_memcpy(tail_in, in + i, static_cast<size_t>(n - i) * sizeof(In));
  fn(tail_in, tail_out);
  if (out) __builtin_memcpy(out + i, tail_out, static_cast<size_t>(n - i) * sizeof(Out));
}

ZT_AVX2_INLINE __m256i load(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

ZT_AVX2_INLINE void store_in_order(void* p, __m256i packed) {
  _mm256_storeu_si256(static_cast<__m256i*>(p), _mm256_permute4x64_epi64(packed, 0xD8));
}

// The lane-wise maximum and minimum of the values seen.
struct Extremes {
  __m256i hi, lo;  // start at zero
  ZT_AVX2_INLINE void operator()(const int32_t* p, int16_t*) {
    hi = _mm256_max_epi32(hi, load(p));
    lo = _mm256_min_epi32(lo, load(p));
  }
};

// Magnitudes (|INT32_MIN| is 2^31 as unsigned) >> a, ORed with "anything discarded", signed
// back; 16 int32 to 16 int16 in order.
struct RoundToOdd {
  __m128i shift;
  __m256i below;
  ZT_AVX2_INLINE __m256i odd(const int32_t* p) const {
    const __m256i v = load(p), mag = _mm256_abs_epi32(v);
    const __m256i exact = _mm256_cmpeq_epi32(_mm256_and_si256(mag, below), _mm256_setzero_si256());
    const __m256i kept = _mm256_or_si256(_mm256_srl_epi32(mag, shift),
                                         _mm256_andnot_si256(exact, _mm256_set1_epi32(1)));
    return _mm256_sign_epi32(kept, v);
  }
  ZT_AVX2_INLINE void operator()(const int32_t* p, int16_t* s) const {
    store_in_order(s, _mm256_packs_epi32(odd(p), odd(p + 8)));
  }
};

// Round to nearest: (|v| + half) >> s, at most 127, signed back; 32 int16 to 32 int8 in order.
// Magnitudes below 2^15 plus half of at most 2^15 fit in uint16.
struct RoundShift {
  __m256i half;
  __m128i shift;
  ZT_AVX2_INLINE __m256i rounded(const int16_t* p) const {
    const __m256i v = load(p);
    const __m256i r = _mm256_srl_epi16(_mm256_add_epi16(_mm256_abs_epi16(v), half), shift);
    return _mm256_sign_epi16(_mm256_min_epu16(r, _mm256_set1_epi16(127)), v);
  }
  ZT_AVX2_INLINE void operator()(const int16_t* p, int8_t* o) const {
    store_in_order(o, _mm256_packs_epi16(rounded(p), rounded(p + 16)));
  }
};

}  // namespace

ZT_AVX2 int stage_s16(const int32_t* acc, int64_t n, int16_t* stage) {
  Extremes e{_mm256_setzero_si256(), _mm256_setzero_si256()};
  for_each_vector<8>(acc, n, static_cast<int16_t*>(nullptr), e);
  alignas(32) int32_t his[8], los[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(his), e.hi);
  _mm256_store_si256(reinterpret_cast<__m256i*>(los), e.lo);
  int64_t amax = 0;
  for (int l = 0; l < 8; ++l) {
    const int64_t m =
        his[l] > -static_cast<int64_t>(los[l]) ? his[l] : -static_cast<int64_t>(los[l]);
    amax = m > amax ? m : amax;
  }
  const int range = std::bit_width(static_cast<uint64_t>(amax));
  const int a = range > 15 ? range - 15 : 0;
  const RoundToOdd round{_mm_cvtsi32_si128(a),
                         _mm256_set1_epi32(static_cast<int>((uint32_t{1} << a) - 1))};
  for_each_vector<16>(acc, n, stage, round);
  return range;
}

ZT_AVX2 void round_shift_s16(const int16_t* stage, int64_t n, int s, int8_t* out) {
  const RoundShift round{_mm256_set1_epi16(static_cast<int16_t>(s > 0 ? 1 << (s - 1) : 0)),
                         _mm_cvtsi32_si128(s)};
  for_each_vector<32>(stage, n, out, round);
}

}  // namespace zotrain::kernels::avx2

#endif
