// Philox-4x32-10 with AVX2, bit for bit philox4x32 (core/philox.cpp). A block's four words live
// in the low halves of 64-bit lanes, 4 blocks to a vector: vpmuludq then yields each 32 x 32 ->
// 64-bit product of a round in place (low word = lo, high word = hi, one shift away), with no
// blends. The high halves carry leftovers that vpmuludq and the final store ignore.
#include "int8_avx2.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include "avx2_target.h"
#include "zotrain/core/rng.h"

namespace zotrain::kernels::avx2 {

namespace {

// The words of 4 blocks (low halves of c[w]'s 64-bit lanes), block by block: out[4 l + w].
ZT_AVX2_INLINE void store_blocks(const __m256i (&c)[4], uint32_t* out) {
  const __m256i w01 = _mm256_blend_epi32(c[0], _mm256_slli_epi64(c[1], 32), 0xAA);
  const __m256i w23 = _mm256_blend_epi32(c[2], _mm256_slli_epi64(c[3], 32), 0xAA);
  const __m256i b02 = _mm256_unpacklo_epi64(w01, w23);  // block 0 | block 2
  const __m256i b13 = _mm256_unpackhi_epi64(w01, w23);  // block 1 | block 3
  auto* o = reinterpret_cast<__m256i*>(out);
  _mm256_storeu_si256(o, _mm256_permute2x128_si256(b02, b13, 0x20));
  _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(b02, b13, 0x31));
}

}  // namespace

// Groups of 8 blocks as two vectors of 4: two independent chains of dependent multiplies keep
// the multiplier busy while each waits.
ZT_AVX2 int64_t philox4x32_run(uint64_t j0, uint32_t c2, uint32_t c3, uint64_t key, int64_t blocks,
                               uint32_t* out) {
  const __m256i m0 = _mm256_set1_epi64x(kPhiloxM0), m1 = _mm256_set1_epi64x(kPhiloxM1);
  int64_t b = 0;
  for (; b + 8 <= blocks; b += 8) {
    __m256i c[2][4];
    for (int h = 0; h < 2; ++h) {
      // Counter j + l whole in each 64-bit lane: its low word in place, its high word shifted.
      const __m256i j = _mm256_add_epi64(
          _mm256_set1_epi64x(static_cast<int64_t>(j0 + static_cast<uint64_t>(b + 4 * h))),
          _mm256_setr_epi64x(0, 1, 2, 3));
      c[h][0] = j;
      c[h][1] = _mm256_srli_epi64(j, 32);
      c[h][2] = _mm256_set1_epi64x(c2);
      c[h][3] = _mm256_set1_epi64x(c3);
    }
    uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
    for (int round = 0; round < 10; ++round) {
      const __m256i key0 = _mm256_set1_epi64x(k0), key1 = _mm256_set1_epi64x(k1);
      for (int h = 0; h < 2; ++h) {
        const __m256i p0 = _mm256_mul_epu32(c[h][0], m0), p1 = _mm256_mul_epu32(c[h][2], m1);
        c[h][0] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c[h][1]), key0);
        c[h][1] = p1;
        c[h][2] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c[h][3]), key1);
        c[h][3] = p0;
      }
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    for (int h = 0; h < 2; ++h) store_blocks(c[h], out + 4 * (b + 4 * h));
  }
  return b;
}

}  // namespace zotrain::kernels::avx2

#endif
