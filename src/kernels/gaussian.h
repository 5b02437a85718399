// Standard normal pairs from random words by the Box-Muller transform, with a logarithm and a
// sine/cosine of our own (Cephes' polynomials) written in +, -, *, / and sqrt only and compiled
// without fused multiply-adds: every operation is correctly rounded IEEE arithmetic, so the
// values are the same bits on every CPU, vector width and libm, which seed replay between a
// device and its host relies on. The loop vectorizes (8 lanes with AVX2), unlike libm calls.
#pragma once

#include <cstdint>

namespace zotrain::kernels {

// For each pair b < pairs, from the words u = words[4 b] and v = words[4 b + 1]:
// r = sqrt(-2 ln U), U = ((u >> 8) + 1) 2^-24 in (0, 1]; a = 2 pi V, V = (v >> 8) 2^-24 in
// [0, 1); z[2 b] = r cos a and z[2 b + 1] = r sin a. Words 2 and 3 of each block are not read.
// The active kernel set's build: 16 lanes in the sets that require AVX-512, else 8.
void gaussian_pairs(int64_t pairs, const uint32_t* words, float* z);

namespace avx512 {
// The 16-lane build (AVX-512F), for those sets.
void gaussian_pairs(int64_t pairs, const uint32_t* words, float* z);
}  // namespace avx512

}  // namespace zotrain::kernels
