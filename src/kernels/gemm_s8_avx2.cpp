// The AVX2 int8 product C (+)= A · B^T: register tiles of 3 x 4 dot products, each a vector of
// int32 partial sums along k, multiplied either way of int8_products_avx2.h (kStep bytes of k a
// vector). Integer sums are exact, so C is bit for bit the portable kernel's.
#include "int8_avx2.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include "avx2_target.h"
#include "int8_products_avx2.h"

namespace zotrain::kernels::avx2 {

ZT_AVX2 bool all_nonneg_s8(const int8_t* x, int64_t n) {
  // The sign bits ORed together: one OR a vector, no branch until the end.
  __m256i any = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    any = _mm256_or_si256(any, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
  int8_t rest = 0;
  for (; i < n; ++i) rest |= x[i];
  return _mm256_movemask_epi8(any) == 0 && rest >= 0;
}

namespace {

constexpr int kRowsA = 3, kRowsB = 4;  // a tile: 12 accumulators, 3 A vectors, a B vector

// Bytes of k an operand vector holds.
template <class P>
constexpr int kStep = 8 * P::kGroup;

template <class P, int K>
ZT_AVX2_INLINE void dot_step(const int8_t* const (&a)[kRowsA], const int8_t* const (&b)[kRowsB],
                             int64_t p, __m256i (&acc)[kRowsA][kRowsB]) {
  __m256i av[kRowsA];
#pragma GCC unroll 4
  for (int i = 0; i < kRowsA; ++i) av[i] = P::template load<K>(a[i] + p);
#pragma GCC unroll 4
  for (int j = 0; j < kRowsB; ++j) {
    const __m256i bv = P::template load<K>(b[j] + p);
#pragma GCC unroll 4
    for (int i = 0; i < kRowsA; ++i) acc[i][j] = _mm256_add_epi32(acc[i][j], P::madd(av[i], bv));
  }
}

// C[i][j] for the kRowsA x kRowsB rows a[i], b[j]: vector partial sums along k (a whole vector,
// then half of one at a time), then the lanes added, then the last products. Rows past m or n
// are given as copies of the last one, and their results dropped.
template <class P>
ZT_AVX2 void dot_tile(int64_t k, const int8_t* const (&a)[kRowsA], const int8_t* const (&b)[kRowsB],
                      int32_t (&out)[kRowsA][kRowsB]) {
  __m256i acc[kRowsA][kRowsB];
#pragma GCC unroll 4
  for (int i = 0; i < kRowsA; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < kRowsB; ++j) acc[i][j] = _mm256_setzero_si256();
  int64_t p = 0;
  for (; p + kStep<P> <= k; p += kStep<P>) dot_step<P, kStep<P>>(a, b, p, acc);
  if (p + kStep<P> / 2 <= k) dot_step<P, kStep<P> / 2>(a, b, p, acc), p += kStep<P> / 2;
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
ZT_AVX2 void gemm_nt(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int8_t* b,
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

ZT_AVX2 bool rows_nonneg(int64_t rows, int64_t k, const int8_t* x, int64_t ld) {
  for (int64_t r = 0; r < rows; ++r)
    if (!all_nonneg_s8(x + r * ld, k)) return false;
  return true;
}

}  // namespace

// Unsigned wherever one operand lies in [0, 127] (ReLU outputs: A in the linear layers' forward,
// B, the patches, in a convolution's weight gradient), which a scan of O(m k) or O(n k) finds
// against the product's O(m n k).
ZT_AVX2 void gemm_s8_nt(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                        const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc, bool accumulate) {
  if (rows_nonneg(m, k, a, lda))
    return gemm_nt<Unsigned>(m, n, k, a, lda, b, ldb, c, ldc, 1, accumulate);
  if (rows_nonneg(n, k, b, ldb))
    return gemm_nt<Unsigned>(n, m, k, b, ldb, a, lda, c, 1, ldc, accumulate);
  gemm_nt<Widened>(m, n, k, a, lda, b, ldb, c, ldc, 1, accumulate);
}

}  // namespace zotrain::kernels::avx2

#endif
