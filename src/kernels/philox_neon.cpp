// Philox-4x32-10 on NEON, bit for bit philox4x32 (core/philox.cpp), for the AArch64 kernel sets.
// One block per 32-bit lane: c[w] holds word w of four blocks, so a round's 32 x 32 -> 64-bit
// products are umull and umull2 (two lanes each) and their low and high words one uzp1/uzp2
// away; vst4q stores the words block by block.
#if defined(__aarch64__)

#include <arm_neon.h>

#include "neon.h"
#include "zotrain/core/rng.h"

namespace zotrain::kernels::neon {

namespace {

constexpr int64_t kLanes = 4;  // blocks per vector

// lo and hi words of the four products a[l] * m.
inline void mul_hi_lo(uint32x4_t a, uint32x4_t m, uint32x4_t& lo, uint32x4_t& hi) {
  const uint32x4_t p01 = vreinterpretq_u32_u64(vmull_u32(vget_low_u32(a), vget_low_u32(m)));
  const uint32x4_t p23 = vreinterpretq_u32_u64(vmull_high_u32(a, m));
  lo = vuzp1q_u32(p01, p23);
  hi = vuzp2q_u32(p01, p23);
}

// H vectors of blocks, counters j0 + [0, H kLanes), into c. Two vectors make two independent
// chains of dependent multiplies for in-order cores.
template <int H>
inline void blocks_of(uint64_t j0, uint32_t c2, uint32_t c3, uint64_t key, uint32x4x4_t (&c)[H]) {
  const uint32x4_t m0 = vdupq_n_u32(kPhiloxM0), m1 = vdupq_n_u32(kPhiloxM1);
  for (int h = 0; h < H; ++h) {
    uint32_t lo[kLanes], hi[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) {
      const uint64_t j = j0 + static_cast<uint64_t>(kLanes * h + l);
      lo[l] = static_cast<uint32_t>(j);
      hi[l] = static_cast<uint32_t>(j >> 32);
    }
    c[h].val[0] = vld1q_u32(lo);
    c[h].val[1] = vld1q_u32(hi);
    c[h].val[2] = vdupq_n_u32(c2);
    c[h].val[3] = vdupq_n_u32(c3);
  }
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint32x4_t key0 = vdupq_n_u32(k0), key1 = vdupq_n_u32(k1);
    for (int h = 0; h < H; ++h) {
      uint32x4_t lo0, hi0, lo1, hi1;
      mul_hi_lo(c[h].val[0], m0, lo0, hi0);
      mul_hi_lo(c[h].val[2], m1, lo1, hi1);
      c[h].val[0] = veorq_u32(veorq_u32(hi1, c[h].val[1]), key0);
      c[h].val[1] = lo1;
      c[h].val[2] = veorq_u32(veorq_u32(hi0, c[h].val[3]), key1);
      c[h].val[3] = lo0;
    }
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
}

}  // namespace

// All the blocks, two vectors at a time; a remainder of fewer than kLanes blocks runs a whole
// vector into a buffer.
int64_t philox4x32_run(uint64_t j0, uint32_t c2, uint32_t c3, uint64_t key, int64_t blocks,
                       uint32_t* out) {
  int64_t b = 0;
  for (; b + 2 * kLanes <= blocks; b += 2 * kLanes) {
    uint32x4x4_t c[2];
    blocks_of<2>(j0 + static_cast<uint64_t>(b), c2, c3, key, c);
    for (int h = 0; h < 2; ++h) vst4q_u32(out + 4 * (b + kLanes * h), c[h]);
  }
  for (; b < blocks; b += kLanes) {
    uint32x4x4_t c[1];
    blocks_of<1>(j0 + static_cast<uint64_t>(b), c2, c3, key, c);
    if (b + kLanes <= blocks) {
      vst4q_u32(out + 4 * b, c[0]);
      continue;
    }
    uint32_t words[4 * kLanes];
    vst4q_u32(words, c[0]);
    for (int64_t w = 0; w < 4 * (blocks - b); ++w) out[4 * b + w] = words[w];
  }
  return blocks;
}

}  // namespace zotrain::kernels::neon

#endif
