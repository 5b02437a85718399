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

// Elements per chunk of add_perturbation, a multiple of kSignsPerBlock: words and values stay
// in L1.
constexpr int64_t kChunk = 512;

// Where a chunk of values may start: a pair's first element, or a sign block's.
int64_t chunk_alignment(const PerturbationSpec& spec) {
  return spec.dist == Distribution::kRademacher ? kSignsPerBlock : 2;
}

// z[k] = z_{a + k} for k < n <= kChunk, `a` a multiple of chunk_alignment(spec); z has room for
// n rounded up to even.
void chunk_values(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor, int64_t a,
                  int64_t n, float* z) {
  uint32_t words[4 * (kChunk / 2)];
  const int64_t pairs = (n + 1) / 2;
  const auto ua = static_cast<uint64_t>(a);
  if (spec.dist == Distribution::kRademacher) {
    const int64_t blocks = (n + kSignsPerBlock - 1) / kSignsPerBlock;
    kernels::philox4x32_run(ua / kSignsPerBlock, tensor, kSignWord3, seed, blocks, words);
    kernels::sign_bits(2 * pairs, words, z);
    if (spec.p_zero <= 0.0f) return;
  }
  kernels::philox4x32_run(ua / 2, tensor, kPerturbationWord3, seed, pairs, words);
  if (spec.dist == Distribution::kGaussian) kernels::gaussian_pairs(pairs, words, z);
  if (spec.dist == Distribution::kUniform) kernels::uniform_pairs(pairs, words, z);
  if (spec.p_zero > 0.0f) kernels::zero_pairs(pairs, words, spec.p_zero, z);
}

}  // namespace

float perturbation(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor, uint64_t i) {
  float z[kChunk];
  const auto align = static_cast<uint64_t>(chunk_alignment(spec));
  const uint64_t a = i / align * align;
  chunk_values(spec, seed, tensor, static_cast<int64_t>(a), static_cast<int64_t>(i - a + 1), z);
  return z[i - a];
}

namespace {

// Calls fn(i, z_i) for i in [begin, end), in order.
template <typename Fn>
void for_each_value(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor, int64_t begin,
                    int64_t end, Fn&& fn) {
  float z[kChunk];
  const int64_t align = chunk_alignment(spec);
  for (int64_t i = begin; i < end;) {
    const int64_t a = i / align * align, n = std::min(kChunk, end - a);
    chunk_values(spec, seed, tensor, a, n, z);
    for (const int64_t stop = a + n; i < stop; ++i) fn(i, z[i - a]);
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
    for_each_value(spec, seed, tensor, begin, end, [&](int64_t i, float z) {
      dst[i - begin] = perturbed(src[i - begin], scale, z, max_abs);
    });
    return;
  }
  for_each_value(spec, seed, tensor, begin, end, [&](int64_t i, float z) {
    dst[i - begin] = perturbed(src[i - begin], scale, z, 0.0f);
  });
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
