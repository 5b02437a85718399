// Internal to src/kernels: Philox-4x32-10 on x86 vectors, bit for bit philox4x32
// (core/philox.cpp), compiled once per register width from this source: philox_avx2.cpp for
// 256-bit registers (AVX2), philox_avx512.cpp for 512-bit ones (AVX-512F, in the kernel sets
// that require AVX-512). The including file defines ZT_PHILOX_NS (the namespace), ZT_PHILOX_TARGET
// (the target attribute's string) and ZT_PHILOX_BITS (256 or 512). Only the vector primitives
// below differ between the widths, so the rounds tested on one are the rounds the other runs.
//
// A block's four words live in the low halves of 64-bit lanes, one block per lane: vpmuludq then
// yields each 32 x 32 -> 64-bit product of a round in place (low word = lo, high word = hi, one
// shift away), with no blends. The high halves carry leftovers that vpmuludq and the final store
// ignore.
#pragma once

#if !defined(ZT_PHILOX_NS) || !defined(ZT_PHILOX_TARGET) || !defined(ZT_PHILOX_BITS)
#error "define ZT_PHILOX_NS, ZT_PHILOX_TARGET and ZT_PHILOX_BITS before including philox_x86.h"
#endif

#include <immintrin.h>

#include <cstdint>

#include "zotrain/core/rng.h"

#define ZT_PHILOX __attribute__((target(ZT_PHILOX_TARGET)))
#define ZT_PHILOX_INLINE inline __attribute__((always_inline, target(ZT_PHILOX_TARGET)))

namespace zotrain::kernels::ZT_PHILOX_NS {

namespace {

#if ZT_PHILOX_BITS == 512
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics pass _mm512_undefined_epi32() as their unused merge operand, which
// -Wmaybe-uninitialized reports at every call (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
using V = __m512i;
constexpr int64_t kLanes = 8;  // blocks per vector
ZT_PHILOX_INLINE V splat(uint64_t x) {
  return _mm512_set1_epi64(static_cast<int64_t>(x));
}
ZT_PHILOX_INLINE V lane_index() {
  return _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
}
ZT_PHILOX_INLINE V add64(V a, V b) {
  return _mm512_add_epi64(a, b);
}
ZT_PHILOX_INLINE V mul32(V a, V b) {
  return _mm512_mul_epu32(a, b);
}
ZT_PHILOX_INLINE V xor3(V a, V b, V c) {
  return _mm512_ternarylogic_epi64(a, b, c, 0x96);
}
ZT_PHILOX_INLINE V high32(V a) {
  return _mm512_srli_epi64(a, 32);
}
// The words of the vector's 8 blocks (low halves of c[w]'s lanes), block by block: out[4 l + w].
ZT_PHILOX_INLINE void store_blocks(const V (&c)[4], uint32_t* out) {
  const V w01 = _mm512_mask_blend_epi32(0xAAAA, c[0], _mm512_slli_epi64(c[1], 32));
  const V w23 = _mm512_mask_blend_epi32(0xAAAA, c[2], _mm512_slli_epi64(c[3], 32));
  // Block l is the 64-bit words w01[l], w23[l]: interleave them.
  const V lo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
  const V hi = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
  _mm512_storeu_si512(out, _mm512_permutex2var_epi64(w01, lo, w23));
  _mm512_storeu_si512(out + 16, _mm512_permutex2var_epi64(w01, hi, w23));
}
#else
using V = __m256i;
constexpr int64_t kLanes = 4;
ZT_PHILOX_INLINE V splat(uint64_t x) {
  return _mm256_set1_epi64x(static_cast<int64_t>(x));
}
ZT_PHILOX_INLINE V lane_index() {
  return _mm256_setr_epi64x(0, 1, 2, 3);
}
ZT_PHILOX_INLINE V add64(V a, V b) {
  return _mm256_add_epi64(a, b);
}
ZT_PHILOX_INLINE V mul32(V a, V b) {
  return _mm256_mul_epu32(a, b);
}
ZT_PHILOX_INLINE V xor3(V a, V b, V c) {
  return _mm256_xor_si256(_mm256_xor_si256(a, b), c);
}
ZT_PHILOX_INLINE V high32(V a) {
  return _mm256_srli_epi64(a, 32);
}
ZT_PHILOX_INLINE void store_blocks(const V (&c)[4], uint32_t* out) {
  const V w01 = _mm256_blend_epi32(c[0], _mm256_slli_epi64(c[1], 32), 0xAA);
  const V w23 = _mm256_blend_epi32(c[2], _mm256_slli_epi64(c[3], 32), 0xAA);
  const V b02 = _mm256_unpacklo_epi64(w01, w23);  // block 0 | block 2
  const V b13 = _mm256_unpackhi_epi64(w01, w23);  // block 1 | block 3
  auto* o = reinterpret_cast<V*>(out);
  _mm256_storeu_si256(o, _mm256_permute2x128_si256(b02, b13, 0x20));
  _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(b02, b13, 0x31));
}
#endif

// H vectors of blocks, counters j0 + [0, H kLanes), into c. Two vectors make two independent
// chains of dependent multiplies, which keep the multiplier busy while each waits.
template <int H>
ZT_PHILOX_INLINE void blocks_of(uint64_t j0, uint32_t c2, uint32_t c3, uint64_t key, V (&c)[H][4]) {
  const V m0 = splat(kPhiloxM0), m1 = splat(kPhiloxM1);
  for (int h = 0; h < H; ++h) {
    // Counter j + l whole in each 64-bit lane: its low word in place, its high word shifted.
    const V j = add64(splat(j0 + static_cast<uint64_t>(kLanes * h)), lane_index());
    c[h][0] = j;
    c[h][1] = high32(j);
    c[h][2] = splat(c2);
    c[h][3] = splat(c3);
  }
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const V key0 = splat(k0), key1 = splat(k1);
    for (int h = 0; h < H; ++h) {
      const V p0 = mul32(c[h][0], m0), p1 = mul32(c[h][2], m1);
      c[h][0] = xor3(high32(p1), c[h][1], key0);
      c[h][1] = p1;
      c[h][2] = xor3(high32(p0), c[h][3], key1);
      c[h][3] = p0;
    }
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
}

}  // namespace

// philox4x32_run (kernels/philox_run.h) for all the blocks; returns how many. A remainder of
// fewer than kLanes blocks runs a whole vector into a buffer: a perturbation's chunk or a
// tensor's end is rarely a multiple of the vectors.
ZT_PHILOX int64_t philox4x32_run(uint64_t j0, uint32_t c2, uint32_t c3, uint64_t key,
                                 int64_t blocks, uint32_t* out) {
  int64_t b = 0;
  for (; b + 2 * kLanes <= blocks; b += 2 * kLanes) {
    V c[2][4];
    blocks_of<2>(j0 + static_cast<uint64_t>(b), c2, c3, key, c);
    for (int h = 0; h < 2; ++h) store_blocks(c[h], out + 4 * (b + kLanes * h));
  }
  for (; b < blocks; b += kLanes) {
    V c[1][4];
    blocks_of<1>(j0 + static_cast<uint64_t>(b), c2, c3, key, c);
    if (b + kLanes <= blocks) {
      store_blocks(c[0], out + 4 * b);
      continue;
    }
    uint32_t words[4 * kLanes];
    store_blocks(c[0], words);
    for (int64_t w = 0; w < 4 * (blocks - b); ++w) out[4 * b + w] = words[w];
  }
  return blocks;
}

}  // namespace zotrain::kernels::ZT_PHILOX_NS
