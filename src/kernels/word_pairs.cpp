#include "kernels/word_pairs.h"

#include <cstring>

#include "target_clones.h"
#include "zotrain/core/rng.h"

namespace zotrain::kernels {

ZT_CLONES void sign_pairs(int64_t pairs, const uint32_t* words, float* z) {
  // -1.0f with the word's top bit flipped into its sign: +1.0f where the bit is set.
  for (int64_t b = 0; b < pairs; ++b)
    for (int k = 0; k < 2; ++k) {
      const uint32_t bits = (words[4 * b + k] & 0x80000000u) ^ 0xBF800000u;
      std::memcpy(&z[2 * b + k], &bits, sizeof bits);
    }
}

ZT_CLONES void uniform_pairs(int64_t pairs, const uint32_t* words, float* z) {
  for (int64_t b = 0; b < pairs; ++b)
    for (int k = 0; k < 2; ++k)
      z[2 * b + k] = 1.7320508075688772f * (2.0f * u32_to_unit(words[4 * b + k]) - 1.0f);
}

ZT_CLONES void zero_pairs(int64_t pairs, const uint32_t* words, float p_zero, float* z) {
  for (int64_t b = 0; b < pairs; ++b)
    for (int k = 0; k < 2; ++k)
      z[2 * b + k] = u32_to_unit(words[4 * b + 2 + k]) < p_zero ? 0.0f : z[2 * b + k];
}

}  // namespace zotrain::kernels
