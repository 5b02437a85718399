// The x86 NPU depthwise taps (kernel_set.h's depthwise_taps_s8), compiled once per instruction
// set from this source (int8_x86_dot.h): conv_s8_avx2.cpp for AVX2, int8_vnni.cpp for AVX-512
// VNNI, whose build is this one with vpdpwssd for vpmaddwd + vpaddd. Bit for bit the portable
// depthwise_taps_s8 of npu.cpp.
#include "int8_x86_dot.h"
#include "kernel_set.h"
#include "requant_avx2.h"

namespace zotrain::kernels::ZT_S8_NS {

namespace {

using avx2::load_s16;
using avx2::Narrow;
using avx2::Requantizer;

// depthwise_taps_s8 with T taps (0: `taps`). Pairs of taps multiply-add as int16 (dot_pairs_s16:
// vpmaddwd + vpaddd, or vpdpwssd): the unpacks interleave the two taps' inputs, and a lone last
// tap pairs with itself at weight 0.
template <int T>
ZT_S8_INLINE void depthwise_taps(int64_t n, int taps, const int8_t* w, const int64_t* off,
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
      acc0 = dot_pairs_s16(acc0, _mm256_unpacklo_epi16(u, v), wp[p]);
      acc1 = dot_pairs_s16(acc1, _mm256_unpackhi_epi16(u, v), wp[p]);
    }
    narrow(rq(acc0), rq(acc1), y + q);
  }
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
