// int8 max pooling, 2x2 windows of stride 2, for output rows of at least 8 pixels: 8 outputs at a
// time from 16 bytes of each input row (the byte maxima of the two rows, then of each pair as
// 16-bit lanes); a row's last 8 outputs overlap the ones before, so any width is covered. The
// value of a maximum does not depend on which element is the first one, so the output is the
// portable kernel's bit for bit.
#include "int8_avx2.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include "avx2_target.h"

namespace zotrain::kernels::avx2 {

namespace {

ZT_AVX2_INLINE void pool8(const int8_t* r0, const int8_t* r1, int8_t* y) {
  const __m128i m = _mm_max_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r0)),
                                 _mm_loadu_si128(reinterpret_cast<const __m128i*>(r1)));
  const __m128i even = _mm_srai_epi16(_mm_slli_epi16(m, 8), 8), odd = _mm_srai_epi16(m, 8);
  const __m128i pairs = _mm_max_epi16(even, odd);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(y), _mm_packs_epi16(pairs, pairs));
}

}  // namespace

ZT_AVX2 void max_pool_2x2_s8(const Pool2dGeometry& g, int64_t planes, const int8_t* x, int8_t* y) {
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const int8_t* r0 = x + p * g.in_plane() + 2 * oh * g.in_w;
      const int8_t* r1 = r0 + g.in_w;
      int8_t* yr = y + (p * g.out_h + oh) * g.out_w;
      for (int64_t ow = 0; ow < g.out_w; ow += 8) {
        const int64_t at = ow + 8 <= g.out_w ? ow : g.out_w - 8;
        pool8(r0 + 2 * at, r1 + 2 * at, yr + at);
      }
    }
}

}  // namespace zotrain::kernels::avx2

#endif
