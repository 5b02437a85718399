// The AVX2 requantizations: the int8 path's stage_s16 (range, then round to odd into int16) and
// the int16 -> int8 rounding shift of finish_s16, 8 or 32 lanes at a time; the NPU kernels'
// fixed-point requantization (npu.h) of int32 sums, a depthwise convolution's and a residual
// add's, 16 outputs at a time. A row's last partial vector goes through zero-padded copies (zeros
// change neither the range nor other lanes), so every element takes the same vector operations.
// Bit for bit the portable loops of int8.cpp and npu.cpp.
#include <array>
#include <bit>

#include "int8_avx2.h"
#include "kernel_set.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include "avx2_target.h"

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

// requantize (npu.h) of 8 int32 lanes. The scalar rounding floor((p + half - 1) >> right) of a
// product p = -a < 0 is -((a + half) >> right), so each lane is sign(x) * ((|x| * m0 + half) >>
// right): |x| <= 2^31 and m0 < 2^31 multiply exactly as unsigned 32 x 32 -> 64 bits (even and odd
// lanes apart), and the sum stays below 2^63, where the logical 64-bit shift (AVX2 has no
// arithmetic one) is exact. Multipliers >= 1 shift left instead; below 2^-32, shifting by 64 gives
// 0. Truncation to 32 bits before the sign is the scalar's wrap-around, should a product overflow.
struct Requantizer {
  __m256i m0, half;
  __m128i right, left;
  ZT_AVX2_INLINE explicit Requantizer(FixedMultiplier m) {
    const VectorRequantShifts s = vector_requant_shifts(m);
    m0 = _mm256_set1_epi32(m.m0);
    half = _mm256_set1_epi64x(s.half);
    right = _mm_cvtsi32_si128(s.right);
    left = _mm_cvtsi32_si128(s.left);
  }
  // The even lanes of v.
  ZT_AVX2_INLINE __m256i rounded(__m256i v) const {
    return _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(v, m0), half), right);
  }
  ZT_AVX2_INLINE __m256i operator()(__m256i x) const {
    const __m256i mag = _mm256_abs_epi32(x);
    const __m256i even = rounded(mag), odd = rounded(_mm256_srli_epi64(mag, 32));
    const __m256i r = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
    return _mm256_sign_epi32(_mm256_sll_epi32(r, left), x);
  }
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

// 16 int8 as int16.
ZT_AVX2_INLINE __m256i load_s16(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// 16 int8 as int32 in Narrow's lane order.
ZT_AVX2_INLINE void widen(const int8_t* p, __m256i& a, __m256i& b) {
  const __m256i v = load_s16(p);
  a = _mm256_srai_epi32(_mm256_unpacklo_epi16(v, v), 16);
  b = _mm256_srai_epi32(_mm256_unpackhi_epi16(v, v), 16);
}

// requantize_s8 of 16 int32; their in-order halves interleaved by 128 bits into Narrow's order.
struct RequantizeS8 {
  __m256i bias;
  Requantizer rq;
  Narrow narrow;
  ZT_AVX2_INLINE void operator()(const int32_t* p, int8_t* y) const {
    const __m256i v0 = _mm256_add_epi32(load(p), bias), v1 = _mm256_add_epi32(load(p + 8), bias);
    narrow(rq(_mm256_permute2x128_si256(v0, v1, 0x20)), rq(_mm256_permute2x128_si256(v0, v1, 0x31)),
           y);
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

// quantize_s8 of 16 floats (npu.h): in double, as the portable loop; the clamp to [-128, 128]
// before truncating changes no clamped result (vmaxpd takes NaN to -128, so to -127); the
// rounding adds the truncation of twice the exact fraction (-1, 0 or 1), ties away from zero.
struct QuantizeS8 {
  __m256d scale;
  Narrow narrow;
  ZT_AVX2_INLINE __m128i round4(const float* p) const {
    __m256d q = _mm256_div_pd(_mm256_cvtps_pd(_mm_loadu_ps(p)), scale);
    q = _mm256_min_pd(_mm256_max_pd(q, _mm256_set1_pd(-128.0)), _mm256_set1_pd(128.0));
    constexpr int kToZero = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
    const __m256d t = _mm256_round_pd(q, kToZero);
    const __m256d twice_frac = _mm256_mul_pd(_mm256_sub_pd(q, t), _mm256_set1_pd(2.0));
    return _mm256_cvttpd_epi32(_mm256_add_pd(t, _mm256_round_pd(twice_frac, kToZero)));
  }
  ZT_AVX2_INLINE void operator()(const float* p, int8_t* y) const {
    // Narrow's lane order: elements 0-3 and 8-11, then 4-7 and 12-15.
    narrow(_mm256_set_m128i(round4(p + 8), round4(p)),
           _mm256_set_m128i(round4(p + 12), round4(p + 4)), y);
  }
};

// depthwise_taps_s8 with T taps (0: `taps`). Pairs of taps multiply-add as int16 by madd: the
// unpacks interleave the two taps' inputs, and a lone last tap pairs with itself at weight 0.
// kVnni: by vpdpwssd instead of vpmaddwd + vpaddd, the same exact sums; always inlined, so the
// VNNI step is compiled in depthwise_taps_s8_vnni, whose target has it.
template <int T, bool kVnni>
ZT_AVX2_INLINE void depthwise_taps(int64_t n, int taps, const int8_t* w, const int64_t* off,
                                   const int8_t* in, int32_t bias, FixedMultiplier mult, int32_t lo,
                                   int32_t hi, int8_t* y) {
  if constexpr (T > 0) taps = T;
  const int pairs = (taps + 1) / 2;
  __m256i wp[(kMaxDepthwiseTaps + 1) / 2];
  const int8_t* src[kMaxDepthwiseTaps + 1];
  for (int p = 0; p < pairs; ++p) {
    const bool lone = 2 * p + 1 == taps;
    const auto w1 = static_cast<uint16_t>(lone ? 0 : w[2 * p + 1]);
    wp[p] = _mm256_set1_epi32(static_cast<int32_t>(
        static_cast<uint32_t>(static_cast<uint16_t>(w[2 * p])) | uint32_t{w1} << 16));
    src[2 * p] = in + off[2 * p];
    src[2 * p + 1] = in + off[lone ? 2 * p : 2 * p + 1];
  }
  const Requantizer rq(mult);
  const Narrow narrow(lo, hi);
  const __m256i b = _mm256_set1_epi32(bias);
  for (int64_t q = 0; q < n; q += 16) {
    __m256i acc0 = b, acc1 = b;
    for (int p = 0; p < pairs; ++p) {
      const __m256i u = load_s16(src[2 * p] + q), v = load_s16(src[2 * p + 1] + q);
      if constexpr (kVnni) {
        acc0 = _mm256_dpwssd_epi32(acc0, _mm256_unpacklo_epi16(u, v), wp[p]);
        acc1 = _mm256_dpwssd_epi32(acc1, _mm256_unpackhi_epi16(u, v), wp[p]);
      } else {
        acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(_mm256_unpacklo_epi16(u, v), wp[p]));
        acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(_mm256_unpackhi_epi16(u, v), wp[p]));
      }
    }
    narrow(rq(acc0), rq(acc1), y + q);
  }
}

}  // namespace

ZT_AVX2 void requantize_s8(int64_t n, const int32_t* acc, int32_t bias, FixedMultiplier mult,
                           int32_t lo, int32_t hi, int8_t* y) {
  const RequantizeS8 fn{_mm256_set1_epi32(bias), Requantizer(mult), Narrow(lo, hi)};
  for_each_vector<16>(n, y, fn, acc);
}

ZT_AVX2 void depthwise_taps_s8(int64_t n, int taps, const int8_t* w, const int64_t* off,
                               const int8_t* in, int32_t bias, FixedMultiplier mult, int32_t lo,
                               int32_t hi, int8_t* y) {
  // 3x3, the common kernel, with its weights and addresses in registers.
  if (taps == 9) return depthwise_taps<9, false>(n, taps, w, off, in, bias, mult, lo, hi, y);
  depthwise_taps<0, false>(n, taps, w, off, in, bias, mult, lo, hi, y);
}

// The "+vnni" sets' depthwise_taps_s8: the AVX2 kernel with the VNNI step.
__attribute__((target("avx2,avx512f,avx512vl,avx512vnni"))) void depthwise_taps_s8_vnni(
    int64_t n, int taps, const int8_t* w, const int64_t* off, const int8_t* in, int32_t bias,
    FixedMultiplier mult, int32_t lo, int32_t hi, int8_t* y) {
  if (taps == 9) return depthwise_taps<9, true>(n, taps, w, off, in, bias, mult, lo, hi, y);
  depthwise_taps<0, true>(n, taps, w, off, in, bias, mult, lo, hi, y);
}

ZT_AVX2 void add_s8_steps(int64_t n, const int8_t* a, FixedMultiplier ma, const int8_t* b,
                          FixedMultiplier mb, FixedMultiplier down, int32_t lo, int32_t hi,
                          int8_t* y) {
  const AddS8 fn{Requantizer(ma), Requantizer(mb), Requantizer(down), Narrow(lo, hi)};
  for_each_vector<16>(n, y, fn, a, b);
}

ZT_AVX2 void quantize_s8(const float* x, int64_t n, double scale, int8_t* y) {
  const QuantizeS8 fn{_mm256_set1_pd(scale), Narrow(-127, 127)};
  for_each_vector<16>(n, y, fn, x);
}

ZT_AVX2 int stage_s16(const int32_t* acc, int64_t n, int16_t* stage) {
  Extremes e{_mm256_setzero_si256(), _mm256_setzero_si256()};
  for_each_vector<8>(n, static_cast<int16_t*>(nullptr), e, acc);
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
