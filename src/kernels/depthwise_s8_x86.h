// The x86 NPU depthwise taps (kernel_set.h's depthwise_taps_s8), compiled once per instruction
// set from this source (int8_x86_dot.h): conv_s8_avx2.cpp for AVX2, int8_vnni.cpp for AVX-512
// VNNI, whose build is this one with vpdpwssd for vpmaddwd + vpaddd, and the same steps on
// 512-bit registers for 32 outputs at a time. Bit for bit the portable depthwise_taps_s8 of
// npu.cpp.
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
// lie in the room past n (kMaxDepthwiseLanes); returns the first output left. 128-bit lane j of
// the int16 inputs holds outputs 8j .. 8j + 7, so the unpacks' sums are outputs 8j .. 8j + 3 and
// 8j + 4 .. 8j + 7, which vpackssdw puts back in order.
template <bool kWide>
ZT_S8_INLINE int64_t taps_512(int64_t n, int pairs, const int32_t* two, const int8_t* const* src,
                              int32_t bias, const avx512::Requant16& rq, int32_t lo, int32_t hi,
                              int8_t* y) {
  __m512i wz[(kMaxDepthwiseTaps + 1) / 2];
  for (int p = 0; p < pairs; ++p) wz[p] = _mm512_set1_epi32(two[p]);
  const __m512i b = _mm512_set1_epi32(bias);
  const __m512i lo16 = _mm512_set1_epi16(static_cast<int16_t>(lo));
  const __m512i hi16 = _mm512_set1_epi16(static_cast<int16_t>(hi));
  int64_t q = 0;
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

// depthwise_taps_s8 with T taps (0: `taps`). Pairs of taps multiply-add as int16 (dot_pairs_s16:
// vpmaddwd + vpaddd, or vpdpwssd): the unpacks interleave the two taps' inputs, and a lone last
// tap pairs with itself at weight 0.
template <int T>
ZT_S8_INLINE void depthwise_taps(int64_t n, int taps, const int8_t* w, const int64_t* off,
                                 const int8_t* in, int32_t bias, FixedMultiplier mult, int32_t lo,
                                 int32_t hi, int8_t* y) {
  if constexpr (T > 0) taps = T;
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
  int64_t q = 0;
#if ZT_S8_VNNI
  const avx512::Requant16 rq16(mult);
  q = rq16.wide ? taps_512<true>(n, pairs, two, src, bias, rq16, lo, hi, y)
                : taps_512<false>(n, pairs, two, src, bias, rq16, lo, hi, y);
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
