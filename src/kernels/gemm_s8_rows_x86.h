// The x86 int8 product C (+)= op(A) · B with B not transposed (the linear layers' backward:
// dX = dY · W and dW = dY^T · X), compiled with int8_x86_dot.h for AVX2 (gemm_s8_avx2.cpp) and
// AVX-512 VNNI (int8_vnni.cpp). Register tiles of 4 rows of C by 16 columns, 8 int32 vectors,
// over blocks of k: each pair of k steps interleaves two rows of B as int16 pairs and multiplies
// them by each row's pair of A elements (vpmaddwd; vpdpwssd with VNNI), so a step is
// dot_pairs_s16, the instruction the A·B^T tiles use. Integer sums are exact in any order: the
// portable kernel's bits. NEON's version of the same tiling is gemm_s8_rows_neon.cpp.
#include "int8_x86_dot.h"

namespace zotrain::kernels::ZT_S8_NS {

namespace {

constexpr int kNnRows = 4;       // rows of C a tile
constexpr int64_t kNnCols = 16;  // columns of C a tile
constexpr int64_t kNnKc = 512;   // k a block (even): the block's packed A stays in L1

// acc (+)= the tile's products over the block's kc2 pairs of k steps: pa holds each pair's 4
// rows of A as int32 words (A[i, p] low, A[i, p + 1] high; rows past the tile zero), b0 B's row
// at the block's first step and the tile's first column, ldb B's row stride. The accumulators
// hold columns {0-3, 8-11} (lo) and {4-7, 12-15} (hi): vpunpck interleaves within 128-bit lanes.
// kOdd: one step alone (an odd block's last), paired with zeros.
template <int RA, bool kOdd = false>
ZT_S8_INLINE void nn_tile_block(int64_t kc2, const int32_t* pa, const int8_t* b0, int64_t ldb,
                                __m256i (&lo)[kNnRows], __m256i (&hi)[kNnRows]) {
  for (int64_t q = 0; q < kc2; ++q, b0 += 2 * ldb) {
    const __m128i a4 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(pa + kNnRows * q));
    // All four rows zero at both steps (ReLU-sparse gradients): nothing to add.
    if (_mm_testz_si128(a4, a4)) continue;
    const __m256i r0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b0)));
    const __m256i r1 =
        kOdd ? _mm256_setzero_si256()
             : _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b0 + ldb)));
    const __m256i bl = _mm256_unpacklo_epi16(r0, r1), bh = _mm256_unpackhi_epi16(r0, r1);
#pragma GCC unroll 4
    for (int i = 0; i < RA; ++i) {
      const __m256i a = _mm256_set1_epi32(pa[kNnRows * q + i]);
      lo[i] = dot_pairs_s16(lo[i], bl, a);
      hi[i] = dot_pairs_s16(hi[i], bh, a);
    }
  }
}

// Rows [0, RA) of C at c, its columns [0, cols) (cols <= 16), over `pairs` pairs of k steps
// packed in pa from B at b0 (row stride ldb), then, if `odd` is not null, the odd block's last
// step from B's row at odd. load_c: C holds a partial sum.
// RA below 4 for the last rows (a batch of one image is one row).
template <int RA>
ZT_S8 void nn_tile(int64_t cols, int64_t pairs, const int32_t* pa, const int8_t* b0, int64_t ldb,
                   const int8_t* odd, int32_t* c, int64_t ldc, bool load_c) {
  __m256i lo[kNnRows], hi[kNnRows];
  for (int i = 0; i < RA; ++i) lo[i] = hi[i] = _mm256_setzero_si256();
  nn_tile_block<RA>(pairs, pa, b0, ldb, lo, hi);
  if (odd) nn_tile_block<RA, true>(1, pa + kNnRows * pairs, odd, 0, lo, hi);
  for (int i = 0; i < RA; ++i) {
    int32_t out[kNnCols];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                        _mm256_permute2x128_si256(lo[i], hi[i], 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8),
                        _mm256_permute2x128_si256(lo[i], hi[i], 0x31));
    int32_t* ci = c + i * ldc;
    for (int64_t j = 0; j < cols; ++j) ci[j] = load_c ? ci[j] + out[j] : out[j];
  }
}

// nn_tile for `rows` (1..4) rows.
ZT_S8_INLINE void nn_tile_rows(int rows, int64_t cols, int64_t pairs, const int32_t* pa,
                               const int8_t* b0, int64_t ldb, const int8_t* odd, int32_t* c,
                               int64_t ldc, bool load_c) {
  switch (rows) {
    case 4:
      return nn_tile<4>(cols, pairs, pa, b0, ldb, odd, c, ldc, load_c);
    case 3:
      return nn_tile<3>(cols, pairs, pa, b0, ldb, odd, c, ldc, load_c);
    case 2:
      return nn_tile<2>(cols, pairs, pa, b0, ldb, odd, c, ldc, load_c);
    default:
      return nn_tile<1>(cols, pairs, pa, b0, ldb, odd, c, ldc, load_c);
  }
}

}  // namespace

// gemm_s8 with B not transposed. The columns past the last whole tile run from a copy of B's
// last n % 16 columns padded with zeros to 16 (no load past B's end); an odd block's last step is
// paired with zeros.
ZT_S8 void gemm_s8_nn(bool trans_a, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                      const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc, bool accumulate) {
  if (k == 0 && !accumulate)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = 0;
  const int64_t whole = n / kNnCols * kNnCols, rest = n - whole;
  int32_t pa[kNnRows * (kNnKc / 2)];
  int8_t edge[kNnKc * kNnCols];  // the remainder columns of the block's rows, 16 bytes a row
  for (int64_t p0 = 0; p0 < k; p0 += kNnKc) {
    const int64_t kc = k - p0 < kNnKc ? k - p0 : kNnKc, pairs = kc / 2;
    const bool load_c = accumulate || p0 > 0;
    const int8_t* bk = b + p0 * ldb;
    for (int64_t p = 0; p < 2 * ((kc + 1) / 2) && rest > 0; ++p)
      for (int64_t j = 0; j < kNnCols; ++j)
        edge[p * kNnCols + j] = p < kc && j < rest ? bk[p * ldb + whole + j] : 0;
    for (int64_t i0 = 0; i0 < m; i0 += kNnRows) {
      const int rows = static_cast<int>(m - i0 < kNnRows ? m - i0 : kNnRows);
      const auto at = [&](int i, int64_t p) -> int32_t {
        if (i >= rows || p >= kc) return 0;
        return trans_a ? a[(p0 + p) * lda + i0 + i] : a[(i0 + i) * lda + p0 + p];
      };
      for (int64_t q = 0; q < (kc + 1) / 2; ++q)
        for (int i = 0; i < kNnRows; ++i)
          pa[kNnRows * q + i] = static_cast<int32_t>(static_cast<uint16_t>(at(i, 2 * q)) |
                                                     static_cast<uint32_t>(at(i, 2 * q + 1)) << 16);
      int32_t* ci = c + i0 * ldc;
      for (int64_t j = 0; j < whole; j += kNnCols)
        nn_tile_rows(rows, kNnCols, pairs, pa, bk + j, ldb,
                     kc % 2 ? bk + (kc - 1) * ldb + j : nullptr, ci + j, ldc, load_c);
      if (rest > 0)
        nn_tile_rows(rows, rest, (kc + 1) / 2, pa, edge, kNnCols, nullptr, ci + whole, ldc, load_c);
    }
  }
}

}  // namespace zotrain::kernels::ZT_S8_NS
