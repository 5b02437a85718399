// The x86 int8 product C (+)= A · B^T (int8_x86_dot.h: compiled for AVX2 and for AVX-512 VNNI):
// register tiles of 3 x 4 dot products, each a vector of int32 partial sums along k, multiplied
// one of two ways (Widened, Unsigned below). Integer sums
// are exact either way, so C is bit for bit the portable kernel's. Unsigned does the same
// multiplies in fewer instructions (no widening, half the loads and adds) but needs one operand
// in [0, 127]; the convolution (conv_s8_x86.h), whose operands need no widening per product,
// measured slower with it (docs/benchmarks.md).
#include "int8_x86_dot.h"

namespace zotrain::kernels::ZT_S8_NS {

namespace {

constexpr int kRowsA = 3, kRowsB = 4;  // a tile: 12 accumulators, 3 A vectors, a B vector

// Bytes sign-extended to int16, pairs of products summed into int32 (dot_pairs_s16), exact for all
// of -128..127.
struct Widened {
  static constexpr int kStep = 16;  // bytes of k a vector
  // 16 contiguous bytes (8 and zeros above them for K = 8) as one operand vector.
  template <int K>
  ZT_S8_INLINE static __m256i load(const int8_t* p) {
    if constexpr (K == 16)
      return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  ZT_S8_INLINE static __m256i dot(__m256i acc, __m256i x, __m256i w) {
    return dot_pairs_s16(acc, x, w);
  }
};

// x's bytes taken as unsigned (dot_quads_u8s8: vpmaddubsw's u8 x s8 -> int16 sums of pairs, then
// pairs of those summed into int32 by vpmaddwd with ones; or vpdpbusd). Exact for x in [0, 127]:
// a pair sum is at most 2 * 127 * 128 = 32512 in size, short of vpmaddubsw's saturation at 32767
// (which x up to 255 would reach).
struct Unsigned {
  static constexpr int kStep = 32;
  // 32 contiguous bytes.
  template <int K>
  ZT_S8_INLINE static __m256i load(const int8_t* p) {
    static_assert(K == 32);
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  ZT_S8_INLINE static __m256i dot(__m256i acc, __m256i x, __m256i w) {
    return dot_quads_u8s8(acc, x, w);
  }
};

template <class P, int K>
ZT_S8_INLINE void dot_step(const int8_t* const (&a)[kRowsA], const int8_t* const (&b)[kRowsB],
                           int64_t p, __m256i (&acc)[kRowsA][kRowsB]) {
  __m256i av[kRowsA];
#pragma GCC unroll 4
  for (int i = 0; i < kRowsA; ++i) av[i] = P::template load<K>(a[i] + p);
#pragma GCC unroll 4
  for (int j = 0; j < kRowsB; ++j) {
    const __m256i bv = P::template load<K>(b[j] + p);
#pragma GCC unroll 4
    for (int i = 0; i < kRowsA; ++i) acc[i][j] = P::dot(acc[i][j], av[i], bv);
  }
}

// C[i][j] for the kRowsA x kRowsB rows a[i], b[j]: vector partial sums along k (whole vectors,
// then the rest under 32 in Widened's vectors of 16 and 8, whose part-filled vectors cost fewer
// multiplies than Unsigned's would), then the lanes added, then the last k % 8 products. Rows
// past m or n are given as copies of the last one, and their results dropped.
template <class P>
ZT_S8 void dot_tile(int64_t k, const int8_t* const (&a)[kRowsA], const int8_t* const (&b)[kRowsB],
                    int32_t (&out)[kRowsA][kRowsB]) {
  __m256i acc[kRowsA][kRowsB];
#pragma GCC unroll 4
  for (int i = 0; i < kRowsA; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < kRowsB; ++j) acc[i][j] = _mm256_setzero_si256();
  int64_t p = 0;
  for (; p + P::kStep <= k; p += P::kStep) dot_step<P, P::kStep>(a, b, p, acc);
  for (; p + 16 <= k; p += 16) dot_step<Widened, 16>(a, b, p, acc);
  if (p + 8 <= k) dot_step<Widened, 8>(a, b, p, acc), p += 8;
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

// C (+)= A · B^T with C's element (i, j) at c + i * ci + j * cj, so that C^T = B · A^T can be
// written through the same tiles.
template <class P>
ZT_S8 void gemm_nt(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int8_t* b,
                   int64_t ldb, int32_t* c, int64_t ci, int64_t cj, bool accumulate) {
  for (int64_t i0 = 0; i0 < m; i0 += kRowsA)
    for (int64_t j0 = 0; j0 < n; j0 += kRowsB) {
      const int8_t* ar[kRowsA];
      const int8_t* br[kRowsB];
      for (int i = 0; i < kRowsA; ++i) ar[i] = a + (i0 + i < m ? i0 + i : m - 1) * lda;
      for (int j = 0; j < kRowsB; ++j) br[j] = b + (j0 + j < n ? j0 + j : n - 1) * ldb;
      int32_t out[kRowsA][kRowsB];
      dot_tile<P>(k, ar, br, out);
      for (int64_t i = 0; i < kRowsA && i0 + i < m; ++i)
        for (int64_t j = 0; j < kRowsB && j0 + j < n; ++j) {
          int32_t& cij = c[(i0 + i) * ci + (j0 + j) * cj];
          cij = accumulate ? cij + out[i][j] : out[i][j];
        }
    }
}

ZT_S8 bool rows_nonneg(int64_t rows, int64_t k, const int8_t* x, int64_t ld) {
  for (int64_t r = 0; r < rows; ++r)
    if (!all_nonneg_s8(x + r * ld, k)) return false;
  return true;
}

}  // namespace

// Unsigned wherever one operand lies in [0, 127] (ReLU outputs: A in the linear layers' forward,
// B, the patches, in a convolution's weight gradient), which a scan of O(m k) or O(n k) finds
// against the product's O(m n k); not for k under one of its vectors, which it would not use.
ZT_S8 void gemm_s8_nt(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                      const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc, bool accumulate) {
  if (k < Unsigned::kStep) return gemm_nt<Widened>(m, n, k, a, lda, b, ldb, c, ldc, 1, accumulate);
  if (rows_nonneg(m, k, a, lda))
    return gemm_nt<Unsigned>(m, n, k, a, lda, b, ldb, c, ldc, 1, accumulate);
  if (rows_nonneg(n, k, b, ldb))
    return gemm_nt<Unsigned>(n, m, k, b, ldb, a, lda, c, 1, ldc, accumulate);
  gemm_nt<Widened>(m, n, k, a, lda, b, ldb, c, ldc, 1, accumulate);
}

}  // namespace zotrain::kernels::ZT_S8_NS
