#include "zotrain/zo/ternary.h"

#include "zotrain/kernels/int8.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain::zo {

namespace {

inline int element(const Philox4x32& w, int half, uint32_t threshold) {
  if ((w[2 + half] >> 8) < threshold) return 0;
  return (w[half] >> 31) ? 1 : -1;
}

// Calls fn(i, z_i) for i in [begin, end), one Philox block per pair of elements.
template <typename Fn>
void for_each_z(uint64_t seed, uint32_t tensor, uint32_t threshold, int64_t begin, int64_t end,
                Fn fn) {
  for (int64_t i = begin; i < end;) {
    const Philox4x32 w = perturbation_block(seed, tensor, static_cast<uint64_t>(i) / 2);
    for (int half = i & 1; half < 2 && i < end; ++half, ++i) fn(i, element(w, half, threshold));
  }
}

}  // namespace

int ternary(uint64_t seed, uint32_t tensor, uint32_t threshold, uint64_t i) {
  return element(perturbation_block(seed, tensor, i / 2), static_cast<int>(i & 1), threshold);
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
