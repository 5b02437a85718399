// The x86 int8 product C (+)= A · B^T (int8_x86_dot.h: compiled for AVX2 and for AVX-512 VNNI):
// the register tiles of gemm_s8_tiles.h, multiplied one of two ways (Widened, Unsigned below).
// Integer sums are exact either way, so C is bit for bit the portable kernel's. Unsigned does the
// same multiplies in fewer instructions (no widening, half the loads and adds) but needs one
// operand in [0, 127]; the convolution (conv_s8_x86.h), whose operands need no widening per
// product, measured slower with it (docs/benchmarks.md).
#include "int8_x86_dot.h"

namespace zotrain::kernels::ZT_S8_NS {

namespace {

using Sums = __m256i;
ZT_S8_INLINE Sums acc_zero() {
  return _mm256_setzero_si256();
}
// The lanes of the four accumulators added into one vector of 4 sums.
ZT_S8_INLINE void store_sums(const Sums (&acc)[4], int32_t* out) {
  const __m256i h =
      _mm256_hadd_epi32(_mm256_hadd_epi32(acc[0], acc[1]), _mm256_hadd_epi32(acc[2], acc[3]));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                   _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
}

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

#if ZT_S8_VNNI
// Unsigned with a Tail for dot_tile (AVX-512 VL's zeroing byte loads): the last part-filled step of
// 32 bytes is loaded under a mask (zeros past k, and no fault past the row's end), instead of
// Widened's steps and the scalar rest. (On 512-bit registers the same tiles ran fc1 slower here:
// their 64-byte loads of rows 400 bytes apart cross a cache line nearly every time.)
struct UnsignedMasked : Unsigned {
  struct Tail {
    int64_t p;
    __mmask32 mask;
    ZT_S8_INLINE Tail(int64_t at, int64_t rest) : p(at), mask(_cvtu32_mask32(~0u >> (32 - rest))) {}
    ZT_S8_INLINE __m256i operator()(const int8_t* x) const {
      return _mm256_maskz_loadu_epi8(mask, x + p);
    }
  };
};
using UnsignedWide = UnsignedMasked;
#else
using UnsignedWide = Unsigned;
#endif

}  // namespace
}  // namespace zotrain::kernels::ZT_S8_NS

#include "gemm_s8_tiles.h"

namespace zotrain::kernels::ZT_S8_NS {

namespace {

ZT_S8 bool rows_nonneg(int64_t rows, int64_t k, const int8_t* x, int64_t ld) {
  for (int64_t r = 0; r < rows; ++r)
    if (!all_nonneg_s8(x + r * ld, k)) return false;
  return true;
}

}  // namespace

// Unsigned wherever one operand lies in [0, 127] (ReLU outputs: A in the linear layers' forward,
// B, the patches, in a convolution's weight gradient), which a scan of O(m k) or O(n k) finds
// against the product's O(m n k); on AVX2 not for k under one of its vectors, which it would not
// use (the VNNI build's 512-bit steps mask their last vector).
ZT_S8 void gemm_s8_nt(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                      const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc, bool accumulate) {
  if (!ZT_S8_VNNI && k < Unsigned::kStep)
    return gemm_nt<Widened>(m, n, k, a, lda, b, ldb, c, ldc, 1, accumulate);
  if (rows_nonneg(m, k, a, lda))
    return gemm_nt<UnsignedWide>(m, n, k, a, lda, b, ldb, c, ldc, 1, accumulate);
  if (rows_nonneg(n, k, b, ldb))
    return gemm_nt<UnsignedWide>(n, m, k, b, ldb, a, lda, c, 1, ldc, accumulate);
  gemm_nt<Widened>(m, n, k, a, lda, b, ldb, c, ldc, 1, accumulate);
}

}  // namespace zotrain::kernels::ZT_S8_NS
