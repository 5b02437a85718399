// Internal to src/zo: Helium (MVE) loops of ternary.cpp, for Armv8.1-M cores with the integer
// vector extension; the same values as its portable loops. A sign word is two 16-bit predicates:
// one bit per int8 lane, so 16 signs become ±1 in one select.
#pragma once

#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>

#include <cstdint>

namespace zotrain::zo::mve {

// z[32 w + b] = bit b of words[w] ? +1 : -1, for w < count.
inline void unpack_signs(const uint32_t* words, int64_t count, int8_t* z) {
  const int8x16_t plus = vdupq_n_s8(1), minus = vdupq_n_s8(-1);
  for (int64_t w = 0; w < count; ++w) {
    vst1q_s8(z + 32 * w, vpselq_s8(plus, minus, static_cast<mve_pred16_t>(words[w] & 0xFFFFu)));
    vst1q_s8(z + 32 * w + 16, vpselq_s8(plus, minus, static_cast<mve_pred16_t>(words[w] >> 16)));
  }
}

// dst[k] = clip(src[k] + eps z[k]) to ±127, for |eps| <= 127 (so that eps z is an int8).
inline void add(const int8_t* z, int eps, const int8_t* src, int8_t* dst, int64_t n) {
  const int8x16_t floor = vdupq_n_s8(-127);
  for (int64_t k = 0; k < n; k += 16) {
    const mve_pred16_t live = vctp8q(static_cast<uint32_t>(n - k));
    const int8x16_t moved = vqaddq_s8(
        vldrbq_z_s8(src + k, live), vmulq_n_s8(vldrbq_z_s8(z + k, live), static_cast<int8_t>(eps)));
    vstrbq_p_s8(dst + k, vmaxq_s8(moved, floor), live);
  }
}

// acc[k] += sign z[k].
inline void accumulate(const int8_t* z, int sign, int32_t* acc, int64_t n) {
  for (int64_t k = 0; k < n; k += 4) {
    const mve_pred16_t live = vctp32q(static_cast<uint32_t>(n - k));
    const int32x4_t sum = vmlaq_n_s32(vldrwq_z_s32(acc + k, live), vldrbq_z_s32(z + k, live), sign);
    vstrwq_p_s32(acc + k, sum, live);
  }
}

}  // namespace zotrain::zo::mve

#endif
