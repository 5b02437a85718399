#include "zo/ternary.h"

#include <algorithm>

#include "kernels/philox_run.h"
#include "kernels/target_clones.h"
#include "zo/ternary_mve.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain::zo {

namespace {

// Elements per chunk: whole sign blocks, 8 of them (one AVX2 Philox group).
constexpr int64_t kChunk = 8 * kSignsPerBlock;

// z[k] = z_{a + k} for k < n <= kChunk, `a` a multiple of kSignsPerBlock: the signs of the
// chunk's sign blocks, zeroed by its pair blocks' masks where a threshold asks for them
// (perturbation.h). Plain loops over whole words, which the compiler vectorizes.
ZT_CLONES void chunk_z(uint64_t seed, uint32_t tensor, uint32_t threshold, int64_t a, int64_t n,
                       int8_t* z) {
  uint32_t signs[4 * (kChunk / kSignsPerBlock)], pairs[4 * (kChunk / 2)];
  const auto ua = static_cast<uint64_t>(a);
  const int64_t blocks = (n + kSignsPerBlock - 1) / kSignsPerBlock;
  kernels::philox4x32_run(ua / kSignsPerBlock, tensor, kSignWord3, seed, blocks, signs);
  // Every sign of the blocks: z has room for kChunk.
#if defined(__ARM_FEATURE_MVE)
  mve::unpack_signs(signs, 4 * blocks, z);
#else
  for (int64_t w = 0; w < 4 * blocks; ++w)
    for (int b = 0; b < 32; ++b)
      z[32 * w + b] = static_cast<int8_t>(static_cast<int>((signs[w] >> b) & 1u) * 2 - 1);
#endif
  if (threshold == 0) return;
  const int64_t n_pairs = (n + 1) / 2;
  kernels::philox4x32_run(ua / 2, tensor, kPerturbationWord3, seed, n_pairs, pairs);
  for (int64_t j = 0; j < n_pairs; ++j)
    for (int h = 0; h < 2; ++h)
      if ((pairs[4 * j + 2 + h] >> 8) < threshold) z[2 * j + h] = 0;
}

// Calls fn(z, i0, i1) for consecutive ranges [i0, i1) covering [begin, end), z[i - i0] = z_i.
template <typename Fn>
void for_each_chunk(uint64_t seed, uint32_t tensor, uint32_t threshold, int64_t begin, int64_t end,
                    Fn fn) {
  int8_t z[kChunk];
  for (int64_t i = begin; i < end;) {
    const int64_t a = i / kSignsPerBlock * kSignsPerBlock, n = std::min(kChunk, end - a);
    chunk_z(seed, tensor, threshold, a, n, z);
    fn(z + (i - a), i, a + n);
    i = a + n;
  }
}

ZT_CLONES void add_chunk(const int8_t* z, int eps, const int8_t* src, int8_t* dst, int64_t n) {
#if defined(__ARM_FEATURE_MVE)
  if (eps >= -127 && eps <= 127) return mve::add(z, eps, src, dst, n);
#endif
  // z is -1, 0 or 1, and an eps past ±255 clips every int8 src as ±255 does: so e z (at most
  // 255 · 128 in size for any int8) and src + e z fit 16 bits, and the loop vectorizes in 16-bit
  // lanes.
  const auto e = static_cast<int16_t>(eps < -255 ? -255 : (eps > 255 ? 255 : eps));
  for (int64_t k = 0; k < n; ++k) {
    const auto v = static_cast<int16_t>(src[k] + static_cast<int16_t>(e * z[k]));
    dst[k] = static_cast<int8_t>(v > 127 ? 127 : (v < -127 ? -127 : v));
  }
}

ZT_CLONES void accumulate_chunk(const int8_t* z, int sign, int32_t* acc, int64_t n) {
#if defined(__ARM_FEATURE_MVE)
  mve::accumulate(z, sign, acc, n);
#else
  for (int64_t k = 0; k < n; ++k) acc[k] += sign * z[k];
#endif
}

}  // namespace

int ternary(uint64_t seed, uint32_t tensor, uint32_t threshold, uint64_t i) {
  int8_t z[kChunk];
  const uint64_t a = i / kSignsPerBlock * kSignsPerBlock;
  chunk_z(seed, tensor, threshold, static_cast<int64_t>(a), static_cast<int64_t>(i - a + 1), z);
  return z[i - a];
}

void add_ternary(uint64_t seed, uint32_t tensor, uint32_t threshold, int eps, const int8_t* src,
                 int8_t* dst, int64_t begin, int64_t end) {
  for_each_chunk(seed, tensor, threshold, begin, end, [&](const int8_t* z, int64_t i0, int64_t i1) {
    add_chunk(z, eps, src + i0, dst + i0, i1 - i0);
  });
}

void accumulate_ternary(uint64_t seed, uint32_t tensor, uint32_t threshold, int sign, int32_t* acc,
                        int64_t begin, int64_t end) {
  for_each_chunk(seed, tensor, threshold, begin, end, [&](const int8_t* z, int64_t i0, int64_t i1) {
    accumulate_chunk(z, sign, acc + (i0 - begin), i1 - i0);
  });
}

}  // namespace zotrain::zo
