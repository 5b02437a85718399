// Runs of Philox blocks: the active set's kernel for as many as it takes, the rest one at a time.
// Compiled with floating point disabled as well (CMakeLists.txt).
#include "kernels/philox_run.h"

#include "kernel_set.h"
#include "zotrain/core/rng.h"

namespace zotrain::kernels {

void philox4x32_run(uint64_t j0, uint32_t c2, uint32_t c3, uint64_t key, int64_t blocks,
                    uint32_t* out) {
  const auto fast = active_kernels().philox4x32_run;
  for (int64_t b = fast ? fast(j0, c2, c3, key, blocks, out) : 0; b < blocks; ++b) {
    const uint64_t j = j0 + static_cast<uint64_t>(b);
    const Philox4x32 w =
        philox4x32({static_cast<uint32_t>(j), static_cast<uint32_t>(j >> 32), c2, c3}, key);
    for (int k = 0; k < 4; ++k) out[4 * b + k] = w[k];
  }
}

const char* perturbation_kernels_name() {
  return active_kernels().perturbation_name;
}

}  // namespace zotrain::kernels
