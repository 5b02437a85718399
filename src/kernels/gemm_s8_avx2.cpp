// The AVX2 int8 product C (+)= A · B^T: register tiles of 3 x 4 dot products, each a vector of
// int32 partial sums of pairs of products (vpmaddwd on int8 sign-extended to int16, exact for all
// of -128..127). Integer sums are exact, so C is bit for bit the portable kernel's.
#include "int8_avx2.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include "avx2_target.h"

namespace zotrain::kernels::avx2 {

namespace {

constexpr int kRowsA = 3, kRowsB = 4;  // a tile: 12 accumulators, 3 A vectors, a B vector

// 16 values, or 8 and zero in the upper 8 lanes.
template <int K>
ZT_AVX2_INLINE __m256i load_k(const int8_t* p) {
  if constexpr (K == 16)
    return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

template <int K>
ZT_AVX2_INLINE void dot_step(const int8_t* const (&a)[kRowsA], const int8_t* const (&b)[kRowsB],
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
ZT_AVX2 void dot_tile(int64_t k, const int8_t* const (&a)[kRowsA], const int8_t* const (&b)[kRowsB],
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

ZT_AVX2 void gemm_s8_nt(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                        const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc, bool accumulate) {
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

}  // namespace zotrain::kernels::avx2

#endif
