// The x86 NPU depthwise taps (kernel_set.h's depthwise_taps_s8), compiled once per instruction
// set from this source (int8_x86_dot.h): conv_s8_avx2.cpp for AVX2, int8_vnni.cpp for AVX-512
// VNNI, whose build is this one with vpdpwssd for vpmaddwd + vpaddd (vpdpbusd for vpmaddubsw +
// vpmaddwd + vpaddd), and the same steps on 512-bit registers for 32 (64) outputs at a time. Bit
// for bit the portable depthwise_taps_s8 of npu.cpp.
#include <algorithm>

#include "int8_x86_dot.h"
#include "kernel_set.h"
#include "requant_avx2.h"
#include "requant_avx512.h"

namespace zotrain::kernels::ZT_S8_NS {

namespace {

using avx2::load_s16;
using avx2::Narrow;
using avx2::Requantizer;

#if ZT_S8_VNNI
// 32 int8 as int16 (the zero-masking form: GCC 12's unmasked one warns of its undefined source).
ZT_S8_INLINE __m512i load_s16_512(const int8_t* p) {
  return _mm512_maskz_cvtepi8_epi16(~__mmask32{0},
                                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// depthwise_taps' outputs 32 at a time on 512 bits (the VNNI build) while the last 16 of them
// lie in the room past n (kMaxDepthwiseLanes), from q on; returns the first output left. 128-bit
// lane j of the int16 inputs holds outputs 8j .. 8j + 7, so the unpacks' sums are outputs 8j .. 8j
// + 3 and 8j + 4 .. 8j + 7, which vpackssdw puts back in order.
template <bool kWide>
ZT_S8_INLINE int64_t taps_512(int64_t q, int64_t n, int pairs, const int32_t* two,
                              const int8_t* const* src, int32_t bias, const avx512::Requant16& rq,
                              int32_t lo, int32_t hi, int8_t* y) {
  __m512i wz[(kMaxDepthwiseTaps + 1) / 2];
  for (int p = 0; p < pairs; ++p) wz[p] = _mm512_set1_epi32(two[p]);
  const __m512i b = _mm512_set1_epi32(bias);
  const __m512i lo16 = _mm512_set1_epi16(static_cast<int16_t>(lo));
  const __m512i hi16 = _mm512_set1_epi16(static_cast<int16_t>(hi));
  for (; q + 16 <= n; q += 32) {
    __m512i acc0 = b, acc1 = b;
    for (int p = 0; p < pairs; ++p) {
      const __m512i u = load_s16_512(src[2 * p] + q), v = load_s16_512(src[2 * p + 1] + q);
      acc0 = dot_pairs_s16(acc0, _mm512_unpacklo_epi16(u, v), wz[p]);
      acc1 = dot_pairs_s16(acc1, _mm512_unpackhi_epi16(u, v), wz[p]);
    }
    const __m512i r = _mm512_packs_epi32(rq.lanes<kWide>(acc0), rq.lanes<kWide>(acc1));
    const __m512i clamped = _mm512_min_epi16(_mm512_max_epi16(r, lo16), hi16);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + q),
                        _mm512_maskz_cvtepi16_epi8(~__mmask32{0}, clamped));
  }
  return q;
}
#endif

// depthwise_taps' outputs from q on, 16 at a time on 256 bits, in shift form kWide
// (Requantizer::lanes).
template <bool kWide>
ZT_S8_INLINE void taps_256(int64_t q, int64_t n, int pairs, const __m256i* wp,
                           const int8_t* const* src, int32_t bias, const Requantizer& rq,
                           int32_t lo, int32_t hi, int8_t* y) {
  const Narrow narrow(lo, hi);
  const __m256i b = _mm256_set1_epi32(bias);
  for (; q < n; q += 16) {
    __m256i acc0 = b, acc1 = b;
    for (int p = 0; p < pairs; ++p) {
      const __m256i u = load_s16(src[2 * p] + q), v = load_s16(src[2 * p + 1] + q);
      acc0 = dot_pairs_s16(acc0, _mm256_unpacklo_epi16(u, v), wp[p]);
      acc1 = dot_pairs_s16(acc1, _mm256_unpackhi_epi16(u, v), wp[p]);
    }
    narrow(rq.lanes<kWide>(acc0), rq.lanes<kWide>(acc1), y + q);
  }
}

// Nonnegative inputs (ReLU outputs, in [0, 127]) multiply as u8 against the s8 weights four taps
// at a time (dot_quads_u8s8: vpmaddubsw + vpmaddwd + vpaddd, or vpdpbusd), each output's four
// inputs the bytes of one int32 lane, where the taps come in runs of 3 or 4 at consecutive
// offsets o .. o + 3 (the kernel rows at stride 1; weight 0 past a run of 3): one byte shuffle of
// one load makes 4 outputs' quads in each 128-bit lane, vector j's lane L outputs 16L + 4j ..
// 16L + 4j + 3, the order that the saturating packs narrowing the 4 vectors undo. (Taps
// interleaved from four offsets by unpacks instead, as the strided kernels' would be, ran slower
// than the pairs: the multiplies of a 3x3 kernel's padded quads outnumber its pairs'.)
struct TapRuns {
  int runs = 0;
  int64_t off[kMaxDepthwiseTaps];
  int32_t w[kMaxDepthwiseTaps];  // the run's 4 weights, a byte each
};

// Whether the taps split into runs of 3 or 4 (t: them).
inline bool plan_runs(int taps, const int8_t* w, const int64_t* off, TapRuns& t) {
  for (int i = 0; i < taps;) {
    int len = 1;
    while (len < 4 && i + len < taps && off[i + len] == off[i] + len) ++len;
    if (len < 3) return false;
    uint32_t word = 0;
    for (int j = 0; j < len; ++j) word |= uint32_t{static_cast<uint8_t>(w[i + j])} << (8 * j);
    t.off[t.runs] = off[i];
    t.w[t.runs++] = static_cast<int32_t>(word);
    i += len;
  }
  return true;
}

// The steps of run_taps on 256-bit registers (32 outputs) and, in the VNNI build, on 512.
struct Lanes256 {
  using V = __m256i;
  using Requant = Requantizer;
  static constexpr int64_t kOutputs = 32;
  static ZT_S8_INLINE V load(const int8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  static ZT_S8_INLINE V splat(int32_t v) { return _mm256_set1_epi32(v); }
  static ZT_S8_INLINE V splat_bytes(int8_t v) { return _mm256_set1_epi8(v); }
  static ZT_S8_INLINE V lanes_of(__m128i v) { return _mm256_broadcastsi128_si256(v); }
  static ZT_S8_INLINE V shuffle(V a, V m) { return _mm256_shuffle_epi8(a, m); }
  // Four vectors of int32 as int8 in the quads' order, clamped to [lo, hi] (the saturation
  // within int8 keeps the clamp's result).
  static ZT_S8_INLINE void store(V v0, V v1, V v2, V v3, V lo, V hi, int8_t* y) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y),
                        _mm256_min_epi8(_mm256_max_epi8(avx2::packs_s8(v0, v1, v2, v3), lo), hi));
  }
};

#if ZT_S8_VNNI
struct Lanes512 {
  using V = __m512i;
  using Requant = avx512::Requant16;
  static constexpr int64_t kOutputs = 64;
  static ZT_S8_INLINE V load(const int8_t* p) { return _mm512_loadu_si512(p); }
  static ZT_S8_INLINE V splat(int32_t v) { return _mm512_set1_epi32(v); }
  static ZT_S8_INLINE V splat_bytes(int8_t v) { return _mm512_set1_epi8(v); }
  static ZT_S8_INLINE V lanes_of(__m128i v) {
    return _mm512_maskz_broadcast_i32x4(~__mmask16{0}, v);
  }
  static ZT_S8_INLINE V shuffle(V a, V m) { return _mm512_shuffle_epi8(a, m); }
  static ZT_S8_INLINE void store(V v0, V v1, V v2, V v3, V lo, V hi, int8_t* y) {
    _mm512_storeu_si512(y,
                        _mm512_min_epi8(_mm512_max_epi8(avx512::packs_s8(v0, v1, v2, v3), lo), hi));
  }
};
#endif

// The byte shuffle that makes, in each 128-bit lane, the quads (x[i], x[i + 1], x[i + 2],
// x[i + 3]) of i = from .. from + 3.
ZT_S8_INLINE __m128i run_window(int from) {
  alignas(16) int8_t idx[16];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) idx[4 * i + j] = static_cast<int8_t>(from + i + j);
  return _mm_load_si128(reinterpret_cast<const __m128i*>(idx));
}

// depthwise_taps' outputs from q on in runs of taps (kRuns of them; 0: t's), L::kOutputs at a
// time while they read no further than the taps of outputs below n + kMaxDepthwiseLanes (the
// second load of a run, 4 bytes past the first, ends at output q + kOutputs + 1's inputs of the
// run's third tap); returns the first output left.
template <class L, bool kWide, int kRuns>
ZT_S8_INLINE int64_t run_taps(int64_t q, int64_t n, const TapRuns& t, const int8_t* in,
                              int32_t bias, const typename L::Requant& rq, int32_t lo, int32_t hi,
                              int8_t* y) {
  using V = typename L::V;
  const int runs = kRuns > 0 ? kRuns : t.runs;
  const V w0 = L::lanes_of(run_window(0)), w4 = L::lanes_of(run_window(4));
  const V w8 = L::lanes_of(run_window(8));
  const V b = L::splat(bias);
  const V lo8 = L::splat_bytes(static_cast<int8_t>(lo)),
          hi8 = L::splat_bytes(static_cast<int8_t>(hi));
  for (; q + L::kOutputs + 2 - kMaxDepthwiseLanes <= n; q += L::kOutputs) {
    V acc0 = b, acc1 = b, acc2 = b, acc3 = b;
    for (int r = 0; r < runs; ++r) {
      const int8_t* p = in + q + t.off[r];
      const V w = L::splat(t.w[r]);
      const V a = L::load(p), c = L::load(p + 4);
      acc0 = dot_quads_u8s8(acc0, L::shuffle(a, w0), w);
      acc1 = dot_quads_u8s8(acc1, L::shuffle(a, w4), w);
      acc2 = dot_quads_u8s8(acc2, L::shuffle(a, w8), w);
      acc3 = dot_quads_u8s8(acc3, L::shuffle(c, w8), w);
    }
    L::store(rq.template lanes<kWide>(acc0), rq.template lanes<kWide>(acc1),
             rq.template lanes<kWide>(acc2), rq.template lanes<kWide>(acc3), lo8, hi8, y + q);
  }
  return q;
}

// run_taps in the multiplier's shift form; a 3x3 kernel's three runs as a constant.
template <class L>
ZT_S8_INLINE int64_t run_taps(int64_t q, int64_t n, const TapRuns& t, const int8_t* in,
                              int32_t bias, FixedMultiplier mult, int32_t lo, int32_t hi,
                              int8_t* y) {
  const typename L::Requant rq(mult);
  if (t.runs == 3)
    return rq.wide ? run_taps<L, true, 3>(q, n, t, in, bias, rq, lo, hi, y)
                   : run_taps<L, false, 3>(q, n, t, in, bias, rq, lo, hi, y);
  return rq.wide ? run_taps<L, true, 0>(q, n, t, in, bias, rq, lo, hi, y)
                 : run_taps<L, false, 0>(q, n, t, in, bias, rq, lo, hi, y);
}

// depthwise_taps_s8 with T taps (0: `taps`). Nonnegative inputs in runs (run_taps) while whole
// blocks fit; the rest as pairs of taps multiply-added as int16 (dot_pairs_s16: vpmaddwd + vpaddd,
// or vpdpwssd): the unpacks interleave the two taps' inputs, and a lone last tap pairs with itself
// at weight 0.
template <int T>
ZT_S8_INLINE void depthwise_taps(int64_t n, int taps, const int8_t* w, const int64_t* off,
                                 const int8_t* in, int32_t bias, FixedMultiplier mult, int32_t lo,
                                 int32_t hi, int8_t* y) {
  if constexpr (T > 0) taps = T;
  int64_t q = 0;
  TapRuns runs;
  // Nonnegative: every input of the outputs below n.
  if (plan_runs(taps, w, off, runs) && all_nonneg_s8(in, n + *std::max_element(off, off + taps))) {
#if ZT_S8_VNNI
    q = run_taps<Lanes512>(q, n, runs, in, bias, mult, lo, hi, y);
#endif
    q = run_taps<Lanes256>(q, n, runs, in, bias, mult, lo, hi, y);
  }
  const int pairs = (taps + 1) / 2;
  int32_t two[(kMaxDepthwiseTaps + 1) / 2];  // a pair's weights as int16
  __m256i wp[(kMaxDepthwiseTaps + 1) / 2];
  const int8_t* src[kMaxDepthwiseTaps + 1];
  for (int p = 0; p < pairs; ++p) {
    const bool lone = 2 * p + 1 == taps;
    const auto w1 = static_cast<uint16_t>(lone ? 0 : w[2 * p + 1]);
    two[p] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint16_t>(w[2 * p])) |
                                  uint32_t{w1} << 16);
    wp[p] = _mm256_set1_epi32(two[p]);
    src[2 * p] = in + off[2 * p];
    src[2 * p + 1] = in + off[lone ? 2 * p : 2 * p + 1];
  }
#if ZT_S8_VNNI
  const avx512::Requant16 rq16(mult);
  q = rq16.wide ? taps_512<true>(q, n, pairs, two, src, bias, rq16, lo, hi, y)
                : taps_512<false>(q, n, pairs, two, src, bias, rq16, lo, hi, y);
#endif
  const Requantizer rq(mult);
  if (rq.wide)
    taps_256<true>(q, n, pairs, wp, src, bias, rq, lo, hi, y);
  else
    taps_256<false>(q, n, pairs, wp, src, bias, rq, lo, hi, y);
}

}  // namespace

ZT_S8 void depthwise_taps_s8(int64_t n, int taps, const int8_t* w, const int64_t* off,
                             const int8_t* in, int32_t bias, FixedMultiplier mult, int32_t lo,
                             int32_t hi, int8_t* y) {
  // 3x3, the common kernel, with its weights and addresses in registers.
  if (taps == 9) return depthwise_taps<9>(n, taps, w, off, in, bias, mult, lo, hi, y);
  depthwise_taps<0>(n, taps, w, off, in, bias, mult, lo, hi, y);
}

}  // namespace zotrain::kernels::ZT_S8_NS
