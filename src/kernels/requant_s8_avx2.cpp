// The AVX2 requantizations: the int8 path's stage_s16 (range, then round to odd into int16) and
// the int16 -> int8 rounding shift of finish_s16, 8 or 32 lanes at a time; the NPU kernels'
// fixed-point requantization (npu.h) of int32 sums and of a residual add, 16 outputs at a time
// (its steps in requant_avx2.h, which the depthwise taps share). A row's last partial vector goes
// through zero-padded copies (zeros change neither the range nor other lanes), so every element
// takes the same vector operations. Bit for bit the portable loops of int8.cpp and npu.cpp.
#include <array>

#include "int8_avx2.h"
#include "kernel_set.h"
#include "kernels/int8.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include "avx2_target.h"
#include "requant_avx2.h"

namespace zotrain::kernels::avx2 {

namespace {

// for_each_vector's tails (functions, not lambdas, which would not inherit the AVX2 target).
template <int L, typename T>
std::array<T, L> zero_padded(const T* p, int64_t n) {
  std::array<T, L> a{};
  __builtin_memcpy(a.data(), p, static_cast<size_t>(n) * sizeof(T));
  return a;
}

template <typename Fn, typename Out, typename... Tail>
ZT_AVX2_INLINE void call_on(Fn& fn, Out* out, const Tail&... in) {
  fn(in.data()..., out);
}

// Calls fn(in..., out) for each vector of L elements of every in[0, n) and of out[0, n) (out may
// be null), the last one through zero-padded copies of L elements.
template <int L, typename Out, typename Fn, typename... In>
ZT_AVX2_INLINE void for_each_vector(int64_t n, Out* out, Fn& fn, const In*... in) {
  int64_t i = 0;
  for (; i + L <= n; i += L) fn((in + i)..., out ? out + i : out);
  if (i == n) return;
  std::array<Out, L> tail_out;
  call_on(fn, tail_out.data(), zero_padded<L>(in + i, n - i)...);
  if (out) __builtin_memcpy(out + i, tail_out.data(), static_cast<size_t>(n - i) * sizeof(Out));
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

// 16 int8 as int32 in Narrow's lane order.
ZT_AVX2_INLINE void widen(const int8_t* p, __m256i& a, __m256i& b) {
  const __m256i v = load_s16(p);
  a = _mm256_srai_epi32(_mm256_unpacklo_epi16(v, v), 16);
  b = _mm256_srai_epi32(_mm256_unpackhi_epi16(v, v), 16);
}

// requantize_s8 of 16 int32 in shift form kWide (Requantizer::lanes); their in-order halves
// interleaved by 128 bits into Narrow's order.
template <bool kWide>
struct RequantizeS8 {
  __m256i bias;
  Requantizer rq;
  Narrow narrow;
  ZT_AVX2_INLINE void operator()(const int32_t* p, int8_t* y) const {
    const __m256i v0 = _mm256_add_epi32(load(p), bias), v1 = _mm256_add_epi32(load(p + 8), bias);
    narrow(rq.lanes<kWide>(_mm256_permute2x128_si256(v0, v1, 0x20)),
           rq.lanes<kWide>(_mm256_permute2x128_si256(v0, v1, 0x31)), y);
  }
};

// add_s8_steps of 16 elements.
struct AddS8 {
  Requantizer ra, rb, down;
  Narrow narrow;
  ZT_AVX2_INLINE void operator()(const int8_t* a, const int8_t* b, int8_t* y) const {
    __m256i a0, a1, b0, b1;
    widen(a, a0, a1);
    widen(b, b0, b1);
    narrow(down(_mm256_add_epi32(ra(a0), rb(b0))), down(_mm256_add_epi32(ra(a1), rb(b1))), y);
  }
};

// quantize_s8 of 16 floats (npu.h). x is first clamped in float to +-fl(256 scale), where every
// quotient clamps alike (vmaxps takes NaN to the lower bound, so to -127); npu.cpp divides for
// scales outside [2^-100, 2^100], where fl(1 / scale) and fl(256 scale) are normal floats and the
// float product below cannot overflow (an underflow errs by less than 2^-126). Then |x / scale|
// <= 256 (and an ulp), and Narrow clamps to [-127, 127].
// - Fast, in float: q = x * fl(1 / scale) is within 2^-23 of x / scale relative, 2^-15 absolute,
//   so away from ties (|q - round(q)| <= 1/2 - 2^-13, the difference exact) it rounds as x / scale
//   however vcvtps2dq breaks ties.
// - Otherwise the 16 in double, the portable loop's quotient by vdivpd (5 cycles for 4 lanes,
//   which bound the whole kernel when every vector took it). Truncating q + copysign(1/2 - 2^-54,
//   q) is std::round's ties away from zero for |q| far below 2^52 (a tie reaches the next
//   integer, one ulp below it stays below, at k + 1 = 2^m too).
struct QuantizeS8 {
  __m256 limit, reciprocal;
  __m256d scale;
  Narrow narrow;
  ZT_AVX2_INLINE __m128i round4(__m128 xf) const {
    const __m256d q = _mm256_div_pd(_mm256_cvtps_pd(xf), scale);
    const __m256d sign = _mm256_and_pd(q, _mm256_set1_pd(-0.0));
    const __m256d half = _mm256_or_pd(sign, _mm256_set1_pd(0.49999999999999994));
    return _mm256_cvttpd_epi32(_mm256_add_pd(q, half));
  }
  // Lanes of q within 2^-13 of a tie.
  ZT_AVX2_INLINE __m256 near_tie(__m256 q) const {
    const __m256 f =
        _mm256_sub_ps(q, _mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    return _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), f),
                         _mm256_set1_ps(0.5f - 0x1p-13f), _CMP_GT_OQ);
  }
  ZT_AVX2_INLINE void operator()(const float* p, int8_t* y) const {
    const __m256 low = _mm256_sub_ps(_mm256_setzero_ps(), limit);
    const __m256 a = _mm256_min_ps(_mm256_max_ps(_mm256_loadu_ps(p), low), limit);
    const __m256 b = _mm256_min_ps(_mm256_max_ps(_mm256_loadu_ps(p + 8), low), limit);
    const __m256 qa = _mm256_mul_ps(a, reciprocal), qb = _mm256_mul_ps(b, reciprocal);
    // Narrow's lane order: elements 0-3 and 8-11, then 4-7 and 12-15.
    if (_mm256_movemask_ps(_mm256_or_ps(near_tie(qa), near_tie(qb))) == 0) {
      const __m256i ia = _mm256_cvtps_epi32(qa), ib = _mm256_cvtps_epi32(qb);
      return narrow(_mm256_permute2x128_si256(ia, ib, 0x20),
                    _mm256_permute2x128_si256(ia, ib, 0x31), y);
    }
    narrow(
        _mm256_set_m128i(round4(_mm256_castps256_ps128(b)), round4(_mm256_castps256_ps128(a))),
        _mm256_set_m128i(round4(_mm256_extractf128_ps(b, 1)), round4(_mm256_extractf128_ps(a, 1))),
        y);
  }
};

}  // namespace

ZT_AVX2 void requantize_s8(int64_t n, const int32_t* acc, int32_t bias, FixedMultiplier mult,
                           int32_t lo, int32_t hi, int8_t* y) {
  // The form by a branch (with_shift_form's lambda would have no AVX2 target to inline into).
  const Requantizer rq(mult);
  const __m256i b = _mm256_set1_epi32(bias);
  if (rq.wide) {
    const RequantizeS8<true> fn{b, rq, Narrow(lo, hi)};
    for_each_vector<16>(n, y, fn, acc);
  } else {
    const RequantizeS8<false> fn{b, rq, Narrow(lo, hi)};
    for_each_vector<16>(n, y, fn, acc);
  }
}

ZT_AVX2 void add_s8_steps(int64_t n, const int8_t* a, FixedMultiplier ma, const int8_t* b,
                          FixedMultiplier mb, FixedMultiplier down, int32_t lo, int32_t hi,
                          int8_t* y) {
  const AddS8 fn{Requantizer(ma), Requantizer(mb), Requantizer(down), Narrow(lo, hi)};
  for_each_vector<16>(n, y, fn, a, b);
}

ZT_AVX2 void quantize_s8(const float* x, int64_t n, double scale, int8_t* y) {
  const QuantizeS8 fn{_mm256_set1_ps(static_cast<float>(256.0 * scale)),
                      _mm256_set1_ps(static_cast<float>(1.0 / scale)), _mm256_set1_pd(scale),
                      Narrow(-127, 127)};
  for_each_vector<16>(n, y, fn, x);
}

ZT_AVX2 int stage_s16(const int32_t* acc, int64_t n, int16_t* stage) {
  Extremes e{_mm256_setzero_si256(), _mm256_setzero_si256()};
  for_each_vector<8>(n, static_cast<int16_t*>(nullptr), e, acc);
  // lo's lanes are at most 0 and hi's at least 0: their largest magnitude is the values'.
  alignas(32) int32_t lanes[16];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), e.hi);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes + 8), e.lo);
  const int range = range_bits(lanes, 16);
  stage_s16_in_range(acc, n, range, stage);
  return range;
}

ZT_AVX2 void stage_s16_in_range(const int32_t* acc, int64_t n, int range, int16_t* stage) {
  const int a = range > 15 ? range - 15 : 0;
  const RoundToOdd round{_mm_cvtsi32_si128(a),
                         _mm256_set1_epi32(static_cast<int>((uint32_t{1} << a) - 1))};
  for_each_vector<16>(n, stage, round, acc);
}

ZT_AVX2 void round_shift_s16(const int16_t* stage, int64_t n, int s, int8_t* out) {
  const RoundShift round{_mm256_set1_epi16(static_cast<int16_t>(s > 0 ? 1 << (s - 1) : 0)),
                         _mm_cvtsi32_si128(s)};
  for_each_vector<32>(n, out, round, stage);
}

}  // namespace zotrain::kernels::avx2

#endif
