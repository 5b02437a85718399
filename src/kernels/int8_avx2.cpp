// The AVX2 int8 kernels: register tiles of int32 sums of pairs of products with vpmaddwd (int8
// operands sign-extended to int16, so every product and pair sum is exact for all of
// -128..127). The convolution reads the padded image in place of a patch matrix. Integer sums
// are exact, so the results are bit for bit those of the portable kernels whatever the order.
#include "int8_avx2.h"

#if defined(__x86_64__)

#include <immintrin.h>

namespace zotrain::kernels::avx2 {

namespace {

constexpr int kMR = 6;       // output channels per tile: 12 accumulators, 2 B vectors, a broadcast
constexpr int64_t kNQ = 16;  // output positions per tile (two vectors of 8 int32)

// Tile positions run along the output rows laid out with the padded image's row length wp, as
// the f32 "channel rows" kernel (simd_kernels.h): tap t of position q reads padded element
// off[t] + q, so the B rows of a tile are contiguous runs of the image; the wp - out_w
// positions past each output row are computed and dropped.
struct DirectPlan {
  int64_t hp, wp;
  int64_t positions;  // a multiple of kNQ
  int64_t pairs;      // taps in pairs; an odd last tap pairs with a zero weight
  int64_t padded;     // bytes of the padded image, a multiple of 4
};

DirectPlan direct_plan(const Conv2dGeometry& g) {
  DirectPlan p;
  p.hp = g.in_h + 2 * g.pad;
  p.wp = g.in_w + 2 * g.pad;
  p.positions = (g.out_h * p.wp + kNQ - 1) / kNQ * kNQ;
  p.pairs = (g.patch_size() + 1) / 2;
  // The last tile reads 16 bytes from the last tap's offset past its first position.
  const int64_t last_tap = ((g.in_c - 1) * p.hp + g.k - 1) * p.wp + g.k - 1;
  p.padded = (p.positions + last_tap + 3) / 4 * 4;
  return p;
}

}  // namespace

// Scratch layout: the padded image, the weights as int16 pairs [out_c, pairs, 2], the int32 tap
// offsets [2 pairs].
int64_t conv2d_s8_direct_work_bytes(const Conv2dGeometry& g) {
  const DirectPlan p = direct_plan(g);
  return p.padded + 4 * (g.out_c * p.pairs + 2 * p.pairs);
}

}  // namespace zotrain::kernels::avx2

// Everything below runs only on CPUs with AVX2, and calls nothing compiled without it.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

namespace zotrain::kernels::avx2 {

namespace {

#define ZT_INLINE inline __attribute__((always_inline))

template <int MR>
using Acc = __m256i[MR][2];

// acc[i] = the int32 sums of output channel o0 + i over all tap pairs, for positions q0..q0+15
// in the lane order of vpunpck (acc[i][0]: 0-3, 8-11; acc[i][1]: 4-7, 12-15).
template <int MR>
ZT_INLINE void tile_sums(const DirectPlan& p, const int8_t* xq, const int16_t* pairs,
                         const int32_t* off, Acc<MR>& acc) {
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
  for (int64_t t = 0; t < p.pairs; ++t) {
    const __m256i x0 =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xq + off[2 * t])));
    const __m256i x1 = _mm256_cvtepi8_epi16(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(xq + off[2 * t + 1])));
    const __m256i lo = _mm256_unpacklo_epi16(x0, x1), hi = _mm256_unpackhi_epi16(x0, x1);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      int32_t pair;
      __builtin_memcpy(&pair, pairs + 2 * (i * p.pairs + t), sizeof pair);
      const __m256i w = _mm256_set1_epi32(pair);
      acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(lo, w));
      acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(hi, w));
    }
  }
}

// Stores a tile (channels o0.., positions from (oh, ow) on along the wp-long rows) into the
// [out_c, out_h, out_w] output, dropping positions past out_w and out_h.
template <int MR>
ZT_INLINE void store_tile(const Acc<MR>& acc, const Conv2dGeometry& g, const DirectPlan& p,
                          int64_t o0, int64_t oh, int64_t ow, int32_t* y) {
  const int64_t plane = g.out_plane();
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    int32_t* yo = y + (o0 + i) * plane;
    const __m256i in_order[2] = {_mm256_permute2x128_si256(acc[i][0], acc[i][1], 0x20),
                                 _mm256_permute2x128_si256(acc[i][0], acc[i][1], 0x31)};
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v) {
      int64_t r = oh, c = ow + 8 * v;
      if (c + 8 <= g.out_w) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(yo + r * g.out_w + c), in_order[v]);
        continue;
      }
      alignas(32) int32_t t[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(t), in_order[v]);
      for (int u = 0; u < 8; ++u, ++c) {
        for (; c >= p.wp; c -= p.wp) ++r;
        if (r < g.out_h && c < g.out_w) yo[r * g.out_w + c] = t[u];
      }
    }
  }
}

template <int MR>
void channel_tile(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* xq,
                  const int16_t* pairs, const int32_t* off, int64_t o0, int64_t oh, int64_t ow,
                  int32_t* y) {
  Acc<MR> acc;
  tile_sums<MR>(p, xq, pairs, off, acc);
  store_tile<MR>(acc, g, p, o0, oh, ow, y);
}

// A last tile of its own height, rows < kMR.
template <int MR>
void last_tile(int64_t rows, const Conv2dGeometry& g, const DirectPlan& p, const int8_t* xq,
               const int16_t* pairs, const int32_t* off, int64_t o0, int64_t oh, int64_t ow,
               int32_t* y) {
  if (rows == MR) return channel_tile<MR>(g, p, xq, pairs, off, o0, oh, ow, y);
  if constexpr (MR > 1) last_tile<MR - 1>(rows, g, p, xq, pairs, off, o0, oh, ow, y);
}

}  // namespace

void conv2d_s8_direct(const Conv2dGeometry& g, const int8_t* x, const int8_t* w, int32_t* y,
                      void* work) {
  const DirectPlan p = direct_plan(g);
  const int64_t taps = g.patch_size();
  int8_t* xp = static_cast<int8_t*>(work);
  int16_t* pairs = reinterpret_cast<int16_t*>(xp + p.padded);
  int32_t* off = reinterpret_cast<int32_t*>(pairs + g.out_c * 2 * p.pairs);
  // Tap pair t is int16 weights 2t and 2t + 1 of a row; an odd last tap pairs with a zero weight
  // (and a copy of its own offset).
  for (int64_t o = 0; o < g.out_c; ++o) {
    int16_t* row = pairs + o * 2 * p.pairs;
    for (int64_t t = 0; t < taps; ++t) row[t] = w[o * taps + t];
    if (taps % 2) row[taps] = 0;
  }
  int32_t* next = off;
  for (int64_t c = 0; c < g.in_c; ++c)
    for (int64_t ki = 0; ki < g.k; ++ki)
      for (int64_t kj = 0; kj < g.k; ++kj)
        *next++ = static_cast<int32_t>((c * p.hp + ki) * p.wp + kj);
  if (taps % 2) *next = next[-1];
  __builtin_memset(xp, 0, static_cast<size_t>(p.padded));
  for (int64_t c = 0; c < g.in_c; ++c)
    for (int64_t ih = 0; ih < g.in_h; ++ih)
      __builtin_memcpy(xp + (c * p.hp + ih + g.pad) * p.wp + g.pad, x + (c * g.in_h + ih) * g.in_w,
                       static_cast<size_t>(g.in_w));
  int64_t oh = 0, ow = 0;  // of position q0
  for (int64_t q0 = 0; q0 < p.positions; q0 += kNQ) {
    int64_t o0 = 0;
    for (; o0 + kMR <= g.out_c; o0 += kMR)
      channel_tile<kMR>(g, p, xp + q0, pairs + o0 * 2 * p.pairs, off, o0, oh, ow, y);
    if (o0 < g.out_c)
      last_tile<kMR - 1>(g.out_c - o0, g, p, xp + q0, pairs + o0 * 2 * p.pairs, off, o0, oh, ow, y);
    for (ow += kNQ; ow >= p.wp;) ow -= p.wp, ++oh;
  }
}

// ---- C (+)= A · B^T ----

namespace {

constexpr int kRowsA = 3, kRowsB = 4;  // a tile: 12 accumulators, 3 A vectors, a B vector

// 16 values, or 8 and zero in the upper 8 lanes.
template <int K>
ZT_INLINE __m256i load_k(const int8_t* p) {
  if constexpr (K == 16)
    return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

template <int K>
ZT_INLINE void dot_step(const int8_t* const (&a)[kRowsA], const int8_t* const (&b)[kRowsB],
                        int64_t p, __m256i (&acc)[kRowsA][kRowsB]) {
  __m256i av[kRowsA];
#pragma GCC unroll 4
  for (int i = 0; i < kRowsA; ++i) av[i] = load_k<K>(a[i] + p);
#pragma GCC unroll 4
  for (int j = 0; j < kRowsB; ++j) {
    const __m256i bv = load_k<K>(b[j] + p);
#pragma GCC unroll 4
    for (int i = 0; i < kRowsA; ++i)
      acc[i][j] = _mm256_add_epi32(acc[i][j], _mm256_madd_epi16(av[i], bv));
  }
}

// C[i][j] for the kRowsA x kRowsB rows a[i], b[j]: vector partial sums along k (16, then 8 at a
// time), then the lanes added, then the last k % 8 products. Rows past m or n are given as
// copies of the last one, and their results dropped.
void dot_tile(int64_t k, const int8_t* const (&a)[kRowsA], const int8_t* const (&b)[kRowsB],
              int32_t (&out)[kRowsA][kRowsB]) {
  __m256i acc[kRowsA][kRowsB];
#pragma GCC unroll 4
  for (int i = 0; i < kRowsA; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < kRowsB; ++j) acc[i][j] = _mm256_setzero_si256();
  int64_t p = 0;
  for (; p + 16 <= k; p += 16) dot_step<16>(a, b, p, acc);
  if (p + 8 <= k) dot_step<8>(a, b, p, acc), p += 8;
#pragma GCC unroll 4
  for (int i = 0; i < kRowsA; ++i) {
    // Lanes of the four accumulators of row i added into one vector of 4 sums.
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(acc[i][0], acc[i][1]),
                                        _mm256_hadd_epi32(acc[i][2], acc[i][3]));
    const __m128i sums = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out[i]), sums);
    for (int j = 0; j < kRowsB; ++j)
      for (int64_t q = p; q < k; ++q) out[i][j] += a[i][q] * b[j][q];
  }
}

}  // namespace

void gemm_s8_nt(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int8_t* b,
                int64_t ldb, int32_t* c, int64_t ldc, bool accumulate) {
  for (int64_t i0 = 0; i0 < m; i0 += kRowsA)
    for (int64_t j0 = 0; j0 < n; j0 += kRowsB) {
      const int8_t* ar[kRowsA];
      const int8_t* br[kRowsB];
      for (int i = 0; i < kRowsA; ++i) ar[i] = a + (i0 + i < m ? i0 + i : m - 1) * lda;
      for (int j = 0; j < kRowsB; ++j) br[j] = b + (j0 + j < n ? j0 + j : n - 1) * ldb;
      int32_t out[kRowsA][kRowsB];
      dot_tile(k, ar, br, out);
      for (int64_t i = 0; i < kRowsA && i0 + i < m; ++i)
        for (int64_t j = 0; j < kRowsB && j0 + j < n; ++j) {
          int32_t& cij = c[(i0 + i) * ldc + j0 + j];
          cij = accumulate ? cij + out[i][j] : out[i][j];
        }
    }
}

#undef ZT_INLINE

}  // namespace zotrain::kernels::avx2

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif
