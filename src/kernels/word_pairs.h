// The perturbations other than the Gaussian (gaussian.h) from Philox words: uniform values two a
// block, z[2 b + k] from words[4 b + k] for k in {0, 1}, the sparsity mask from words[4 b + 2 + k];
// signs one bit each. Plain loops the compiler vectorizes (ZT_CLONES), so a Rademacher or
// uniform perturbation costs less than a Gaussian one, as it should.
#pragma once

#include <cstdint>

namespace zotrain::kernels {

// z[k] = +1 where bit k % 32 of words[k / 32] is set, else -1, for k < n: the signs of
// zo/perturbation.h, 32 to a word.
void sign_bits(int64_t n, const uint32_t* words, float* z);
// z = sqrt(3) (2 U - 1), U = (word >> 8) 2^-24: uniform on [-sqrt(3), sqrt(3)), unit variance.
void uniform_pairs(int64_t pairs, const uint32_t* words, float* z);
// z = 0 where (words[4 b + 2 + k] >> 8) 2^-24 < p_zero.
void zero_pairs(int64_t pairs, const uint32_t* words, float p_zero, float* z);

}  // namespace zotrain::kernels
