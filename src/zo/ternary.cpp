#include "zo/ternary.h"

#include <algorithm>

#include "kernels/int8.h"
#include "kernels/philox_run.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain::zo {

namespace {

// z of element k of a chunk from its sign blocks and, with a threshold, its pair blocks
// (perturbation.h).
inline int element(const uint32_t* signs, const uint32_t* pairs, int64_t k, uint32_t threshold) {
  if (threshold > 0 && (pairs[4 * (k / 2) + 2 + (k & 1)] >> 8) < threshold) return 0;
  return sign_bit(signs, k) ? 1 : -1;
}

// Calls fn(i, z_i) for i in [begin, end), in chunks of whole sign blocks drawn in runs
// (kernels/philox_run.h); the pair blocks only where a mask needs them.
template <typename Fn>
void for_each_z(uint64_t seed, uint32_t tensor, uint32_t threshold, int64_t begin, int64_t end,
                Fn fn) {
  constexpr int64_t kRun = 8 * kSignsPerBlock;
  uint32_t signs[4 * 8], pairs[4 * (kRun / 2)];
  for (int64_t i = begin; i < end;) {
    const int64_t a = i / kSignsPerBlock * kSignsPerBlock, n = std::min(kRun, end - a);
    const auto ua = static_cast<uint64_t>(a);
    kernels::philox4x32_run(ua / kSignsPerBlock, tensor, kSignWord3, seed,
                            (n + kSignsPerBlock - 1) / kSignsPerBlock, signs);
    if (threshold > 0)
      kernels::philox4x32_run(ua / 2, tensor, kPerturbationWord3, seed, (n + 1) / 2, pairs);
    for (const int64_t stop = a + n; i < stop; ++i) fn(i, element(signs, pairs, i - a, threshold));
  }
}

}  // namespace

int ternary(uint64_t seed, uint32_t tensor, uint32_t threshold, uint64_t i) {
  const uint64_t a = i / kSignsPerBlock * kSignsPerBlock;
  const auto k = static_cast<int64_t>(i - a);
  const Philox4x32 signs = sign_block(seed, tensor, a / kSignsPerBlock);
  uint32_t pairs[4 * (kSignsPerBlock / 2)];
  if (threshold > 0)
    kernels::philox4x32_run(a / 2, tensor, kPerturbationWord3, seed, k / 2 + 1, pairs);
  return element(signs.data(), pairs, k, threshold);
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
