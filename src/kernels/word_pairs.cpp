#include "kernels/word_pairs.h"

#include <cstring>

#include "target_clones.h"
#include "zotrain/core/rng.h"

namespace zotrain::kernels {

namespace {

// -1.0f with bit b of w moved into its sign: +1.0f where the bit is set.
inline float sign_of_bit(uint32_t w, int b) {
  const uint32_t bits = ((w >> b) << 31) ^ 0xBF800000u;
  float z;
  std::memcpy(&z, &bits, sizeof z);
  return z;
}

}  // namespace

ZT_CLONES void sign_bits(int64_t n, const uint32_t* words, float* z) {
  int64_t k = 0;
  // Whole words: 32 lanes of constant shifts, which the compiler turns into vector shifts.
  for (; k + 32 <= n; k += 32)
    for (int b = 0; b < 32; ++b) z[k + b] = sign_of_bit(words[k / 32], b);
  for (; k < n; ++k) z[k] = sign_of_bit(words[k / 32], static_cast<int>(k % 32));
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
