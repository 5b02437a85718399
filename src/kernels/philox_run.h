// Philox-4x32-10 blocks of consecutive counters, the random words of the zeroth-order
// perturbations: the active instruction set's kernel (8 blocks at once with AVX2), each block
// bit for bit philox4x32's (core/rng.h). Integer arithmetic only.
#pragma once

#include <cstdint>

namespace zotrain::kernels {

// out[4 b + w] = word w of philox4x32({low and high words of j0 + b, c2, c3}, key), b < blocks.
void philox4x32_run(uint64_t j0, uint32_t c2, uint32_t c3, uint64_t key, int64_t blocks,
                    uint32_t* out);
// What the active set runs for the perturbations (Philox words, Box-Muller), for `zotrain info`.
const char* perturbation_kernels_name();

}  // namespace zotrain::kernels
