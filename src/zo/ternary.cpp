#include "zo/ternary.h"

#include <algorithm>

#include "kernels/int8.h"
#include "kernels/philox_run.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain::zo {

namespace {

// z of the element `half` (0 or 1) of the pair whose Philox block is w (perturbation.h).
inline int element(const uint32_t* w, int half, uint32_t threshold) {
  if ((w[2 + half] >> 8) < threshold) return 0;
  return (w[half] >> 31) ? 1 : -1;
}

// Calls fn(i, z_i) for i in [begin, end), one Philox block per pair of elements, drawn in runs
// (kernels/philox_run.h) with the counters of perturbation_block.
template <typename Fn>
void for_each_z(uint64_t seed, uint32_t tensor, uint32_t threshold, int64_t begin, int64_t end,
                Fn fn) {
  constexpr int64_t kRun = 64;
  uint32_t words[4 * kRun];
  for (int64_t i = begin; i < end;) {
    const int64_t j0 = i / 2, blocks = std::min(kRun, (end + 1) / 2 - j0);
    kernels::philox4x32_run(static_cast<uint64_t>(j0), tensor, kPerturbationWord3, seed, blocks,
                            words);
    for (const int64_t stop = std::min(end, 2 * (j0 + blocks)); i < stop; ++i)
      fn(i, element(words + 4 * (i / 2 - j0), static_cast<int>(i & 1), threshold));
  }
}

}  // namespace

int ternary(uint64_t seed, uint32_t tensor, uint32_t threshold, uint64_t i) {
  return element(perturbation_block(seed, tensor, i / 2).data(), static_cast<int>(i & 1),
                 threshold);
}

void add_ternary(uint64_t seed, uint32_t tensor, uint32_t threshold, int eps, const int8_t* src,
                 int8_t* dst, int64_t begin, int64_t end) {
  for_each_z(seed, tensor, threshold, begin, end,
             [&](int64_t i, int z) { dst[i] = kernels::clip_s8(src[i] + eps * z); });
}

void accumulate_ternary(uint64_t seed, uint32_t tensor, uint32_t threshold, int sign, int32_t* acc,
                        int64_t n) {
  for_each_z(seed, tensor, threshold, 0, n, [&](int64_t i, int z) { acc[i] += sign * z; });
}

}  // namespace zotrain::zo
