// int8 max pooling, 2x2 windows of stride 2, for output rows of at least 4 pixels: 8 (or 4)
// outputs at a time from 16 (8) bytes of each input row (the byte maxima of the two rows, then of
// each pair as 16-bit lanes); a row's last 8 (4) outputs overlap the ones before. The
// value of a maximum does not depend on which element is the first one, so the output is the
// portable kernel's bit for bit.
#include "int8_avx2.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include "avx2_target.h"

namespace zotrain::kernels::avx2 {

namespace {

// 2K bytes, K = 8 or 4.
template <int K>
ZT_AVX2_INLINE __m128i load_pairs(const int8_t* p) {
  if constexpr (K == 8) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
}

// K outputs from 2K bytes of each row.
template <int K>
ZT_AVX2_INLINE void pool(const int8_t* r0, const int8_t* r1, int8_t* y) {
  const __m128i m = _mm_max_epi8(load_pairs<K>(r0), load_pairs<K>(r1));
  const __m128i even = _mm_srai_epi16(_mm_slli_epi16(m, 8), 8), odd = _mm_srai_epi16(m, 8);
  const __m128i pairs = _mm_max_epi16(even, odd);
  const int64_t packed = _mm_cvtsi128_si64(_mm_packs_epi16(pairs, pairs));
  __builtin_memcpy(y, &packed, K);
}

// A row of out_w >= K outputs, K at a time, the last K overlapping the ones before.
template <int K>
ZT_AVX2_INLINE void pool_row(const int8_t* r0, const int8_t* r1, int64_t out_w, int8_t* y) {
  for (int64_t ow = 0; ow < out_w; ow += K) {
    const int64_t at = ow + K <= out_w ? ow : out_w - K;
    pool<K>(r0 + 2 * at, r1 + 2 * at, y + at);
  }
}

}  // namespace

ZT_AVX2 void max_pool_2x2_s8(const Pool2dGeometry& g, int64_t planes, const int8_t* x, int8_t* y) {
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const int8_t* r0 = x + p * g.in_plane() + 2 * oh * g.in_w;
      const int8_t* r1 = r0 + g.in_w;
      int8_t* yr = y + (p * g.out_h + oh) * g.out_w;
      if (g.out_w >= 8)
        pool_row<8>(r0, r1, g.out_w, yr);
      else
        pool_row<4>(r0, r1, g.out_w, yr);
    }
}

}  // namespace zotrain::kernels::avx2

#endif
