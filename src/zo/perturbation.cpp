#include "zotrain/zo/perturbation.h"

#include <algorithm>
#include <cmath>

#include "kernels/gaussian.h"
#include "kernels/philox_run.h"
#include "kernels/word_pairs.h"
#include "zotrain/core/error.h"
#include "zotrain/core/rng.h"

namespace zotrain::zo {

namespace {

// Pairs of elements per chunk of add_perturbation: words and values stay in L1.
constexpr int64_t kChunkPairs = 256;

// z[2 b], z[2 b + 1] for the pairs of the Philox blocks words[4 b .. 4 b + 3], b < pairs.
void pair_values(const PerturbationSpec& spec, int64_t pairs, const uint32_t* words, float* z) {
  switch (spec.dist) {
    case Distribution::kGaussian:
      kernels::gaussian_pairs(pairs, words, z);
      break;
    case Distribution::kRademacher:
      kernels::sign_pairs(pairs, words, z);
      break;
    case Distribution::kUniform:
      kernels::uniform_pairs(pairs, words, z);
      break;
  }
  if (spec.p_zero > 0.0f) kernels::zero_pairs(pairs, words, spec.p_zero, z);
}

}  // namespace

float perturbation(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor, uint64_t i) {
  float z[2];
  pair_values(spec, 1, perturbation_block(seed, tensor, i / 2).data(), z);
  return z[i % 2];
}

namespace {

// Calls fn(i, z_i) for i in [begin, end), in order.
template <typename Fn>
void for_each_value(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor, int64_t begin,
                    int64_t end, Fn&& fn) {
  uint32_t words[4 * kChunkPairs];
  float z[2 * kChunkPairs];
  for (int64_t i = begin; i < end;) {
    const int64_t j0 = i / 2, pairs = std::min(kChunkPairs, (end + 1) / 2 - j0);
    kernels::philox4x32_run(static_cast<uint64_t>(j0), tensor, kPerturbationWord3, seed, pairs,
                            words);
    pair_values(spec, pairs, words, z);
    // Element k's value is z[k - 2 j0].
    for (const int64_t stop = std::min(end, 2 * (j0 + pairs)); i < stop; ++i) fn(i, z[i - 2 * j0]);
  }
}

}  // namespace

// The one formula of a perturbed parameter.
inline float perturbed(float src, float scale, float z, float max_abs) {
  return max_abs > 0.0f && !(std::fabs(src) <= max_abs) ? src : src + scale * z;
}

void add_perturbation(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor, float scale,
                      const float* src, float* dst, int64_t begin, int64_t end, float max_abs) {
  if (max_abs > 0.0f) {
    for_each_value(spec, seed, tensor, begin, end,
                   [&](int64_t i, float z) { dst[i] = perturbed(src[i], scale, z, max_abs); });
    return;
  }
  for_each_value(spec, seed, tensor, begin, end,
                 [&](int64_t i, float z) { dst[i] = perturbed(src[i], scale, z, 0.0f); });
}

void add_values(const float* z, float scale, const float* src, float* dst, int64_t n,
                float max_abs) {
  if (max_abs > 0.0f) {
    for (int64_t i = 0; i < n; ++i) dst[i] = perturbed(src[i], scale, z[i], max_abs);
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = perturbed(src[i], scale, z[i], 0.0f);
}

void perturbation_values(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor,
                         int64_t begin, int64_t end, float* z) {
  for_each_value(spec, seed, tensor, begin, end, [&](int64_t i, float v) { z[i - begin] = v; });
}

}  // namespace zotrain::zo
