// Philox-4x32-10 for 8 counters at once with AVX2: the 32 x 32 -> 64-bit products of a round by
// vpmuludq on the even and the odd lanes. Bit for bit philox4x32 (core/philox.cpp).
#include "int8_avx2.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include "avx2_target.h"
#include "zotrain/core/rng.h"

namespace zotrain::kernels::avx2 {

namespace {

// The high and low words of a[l] * m for each 32-bit lane l.
ZT_AVX2_INLINE void mul_hi_lo(__m256i a, __m256i m, __m256i& hi, __m256i& lo) {
  const __m256i even = _mm256_mul_epu32(a, m);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
  lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

}  // namespace

ZT_AVX2 int64_t philox4x32_run(uint64_t j0, uint32_t c2, uint32_t c3, uint64_t key, int64_t blocks,
                               uint32_t* out) {
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(kPhiloxM0));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(kPhiloxM1));
  int64_t b = 0;
  for (; b + 8 <= blocks; b += 8) {
    alignas(32) uint32_t words[4][8];
    for (int l = 0; l < 8; ++l) {
      const uint64_t j = j0 + static_cast<uint64_t>(b + l);
      words[0][l] = static_cast<uint32_t>(j);
      words[1][l] = static_cast<uint32_t>(j >> 32);
    }
    __m256i c[4] = {_mm256_load_si256(reinterpret_cast<const __m256i*>(words[0])),
                    _mm256_load_si256(reinterpret_cast<const __m256i*>(words[1])),
                    _mm256_set1_epi32(static_cast<int>(c2)),
                    _mm256_set1_epi32(static_cast<int>(c3))};
    uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
    for (int round = 0; round < 10; ++round) {
      __m256i hi0, lo0, hi1, lo1;
      mul_hi_lo(c[0], m0, hi0, lo0);
      mul_hi_lo(c[2], m1, hi1, lo1);
      c[0] = _mm256_xor_si256(_mm256_xor_si256(hi1, c[1]), _mm256_set1_epi32(static_cast<int>(k0)));
      c[1] = lo1;
      c[2] = _mm256_xor_si256(_mm256_xor_si256(hi0, c[3]), _mm256_set1_epi32(static_cast<int>(k1)));
      c[3] = lo0;
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    for (int w = 0; w < 4; ++w) _mm256_store_si256(reinterpret_cast<__m256i*>(words[w]), c[w]);
    for (int l = 0; l < 8; ++l)
      for (int w = 0; w < 4; ++w) out[4 * (b + l) + w] = words[w][l];
  }
  return b;
}

}  // namespace zotrain::kernels::avx2

#endif
