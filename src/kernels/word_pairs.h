// The perturbations other than the Gaussian (gaussian.h) from the same Philox words, two values
// a block: z[2 b + k] from words[4 b + k] for k in {0, 1}, the sparsity mask from
// words[4 b + 2 + k]. Plain loops the compiler vectorizes (ZT_CLONES), so a Rademacher or
// uniform perturbation costs less than a Gaussian one, as it should.
#pragma once

#include <cstdint>

namespace zotrain::kernels {

// z = +1 where the word's top bit is set, else -1.
void sign_pairs(int64_t pairs, const uint32_t* words, float* z);
// z = sqrt(3) (2 U - 1), U = (word >> 8) 2^-24: uniform on [-sqrt(3), sqrt(3)), unit variance.
void uniform_pairs(int64_t pairs, const uint32_t* words, float* z);
// z = 0 where (words[4 b + 2 + k] >> 8) 2^-24 < p_zero.
void zero_pairs(int64_t pairs, const uint32_t* words, float p_zero, float* z);

}  // namespace zotrain::kernels
