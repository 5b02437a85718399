// int8 max pooling, 2x2 windows of stride 2, for output rows of at least 4 pixels: 8 (or 4)
// outputs at a time from 16 (8) bytes of each input row (the byte maxima of the two rows, then of
// each pair as 16-bit lanes); a row's last 8 (4) outputs overlap the ones before. The
// value of a maximum does not depend on which element is the first one, so the output is the
// portable kernel's bit for bit. The backward takes the same steps, a window per 16-bit lane,
// with pool_walk.h's rule for where a window's gradient goes; overlapping windows write the
// same values again.
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

// The backward of K windows: dx's two rows from x's (2K bytes each) and K gradients.
template <int K>
ZT_AVX2_INLINE void unpool(const int8_t* r0, const int8_t* r1, const int8_t* dy, int8_t* d0,
                           int8_t* d1) {
  const __m128i top = load_pairs<K>(r0), bottom = load_pairs<K>(r1);
  const __m128i a = _mm_srai_epi16(_mm_slli_epi16(top, 8), 8), b = _mm_srai_epi16(top, 8);
  const __m128i c = _mm_srai_epi16(_mm_slli_epi16(bottom, 8), 8), d = _mm_srai_epi16(bottom, 8);
  int64_t g8 = 0;
  __builtin_memcpy(&g8, dy, K);
  const __m128i grad = _mm_cvtepi8_epi16(_mm_cvtsi64_si128(g8));
  // The gradient goes to the last element that took over the maximum (pool_walk.h).
  const __m128i ab = _mm_max_epi16(a, b), abc = _mm_max_epi16(ab, c);
  const __m128i to_b = _mm_cmpgt_epi16(b, a), to_c = _mm_cmpgt_epi16(c, ab),
                to_d = _mm_cmpgt_epi16(d, abc);
  const __m128i before_d = _mm_andnot_si128(to_d, grad),
                before_c = _mm_andnot_si128(to_c, before_d);
  const __m128i low = _mm_set1_epi16(0xff);
  // Each lane's two bytes: the even element's gradient low, the odd one's high.
  const auto bytes = [&](__m128i even, __m128i odd) {
    return _mm_or_si128(_mm_and_si128(even, low), _mm_slli_epi16(odd, 8));
  };
  const __m128i row0 = bytes(_mm_andnot_si128(to_b, before_c), _mm_and_si128(to_b, before_c));
  const __m128i row1 = bytes(_mm_and_si128(to_c, before_d), _mm_and_si128(to_d, grad));
  if constexpr (K == 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d0), row0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d1), row1);
  } else {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d0), row0);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d1), row1);
  }
}

// A row of out_w >= K windows, K at a time, the last K overlapping the ones before.
template <int K>
ZT_AVX2_INLINE void unpool_row(const int8_t* r0, const int8_t* r1, const int8_t* dy, int64_t out_w,
                               int8_t* d0, int8_t* d1) {
  for (int64_t ow = 0; ow < out_w; ow += K) {
    const int64_t at = ow + K <= out_w ? ow : out_w - K;
    unpool<K>(r0 + 2 * at, r1 + 2 * at, dy + at, d0 + 2 * at, d1 + 2 * at);
  }
}

}  // namespace

ZT_AVX2 void max_pool_2x2_s8_backward(const Pool2dGeometry& g, int64_t planes, const int8_t* x,
                                      const int8_t* dy, int8_t* dx) {
  const int64_t in_h = g.in_h, in_w = g.in_w, out_h = g.out_h, out_w = g.out_w;
  for (int64_t p = 0; p < planes; ++p) {
    int8_t* dxp = dx + p * g.in_plane();
    for (int64_t oh = 0; oh < out_h; ++oh) {
      const int8_t* r0 = x + p * g.in_plane() + 2 * oh * in_w;
      const int8_t* dyr = dy + (p * out_h + oh) * out_w;
      int8_t* d0 = dxp + 2 * oh * in_w;
      if (out_w >= 8)
        unpool_row<8>(r0, r0 + in_w, dyr, out_w, d0, d0 + in_w);
      else
        unpool_row<4>(r0, r0 + in_w, dyr, out_w, d0, d0 + in_w);
      // An odd width's last column and an odd height's last row take no gradient.
      if (in_w > 2 * out_w) d0[in_w - 1] = d0[2 * in_w - 1] = 0;
    }
    if (in_h > 2 * out_h) __builtin_memset(dxp + (in_h - 1) * in_w, 0, static_cast<size_t>(in_w));
  }
}

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
