// Perturbations for zeroth-order training, never stored: element i of the perturbation of
// tensor t under seed s is a pure function of (s, t, i), computed from one Philox block per
// pair of elements. The same z comes out on any thread count, order, platform or process.
#pragma once

#include <cstdint>
#include <string>

#include "zotrain/core/names.h"
#include "zotrain/core/rng.h"

namespace zotrain::zo {

enum class Distribution {
  kGaussian,    // N(0, 1)
  kRademacher,  // ±1
  kUniform,     // uniform on [-sqrt(3), sqrt(3)]: unit variance like the others
};

// Which elements a sparse perturbation zeroes: a random fraction p_zero of them, or the
// fraction p_zero of largest magnitude (Sparse-MeZO: perturb the small weights), decided from
// the parameters at the start of each step.
enum class Mask { kRandom, kMagnitude };

struct PerturbationSpec {
  Distribution dist = Distribution::kGaussian;
  float p_zero = 0.0f;  // each element is zeroed with this probability (sparse ZO)
};

// Elements 2j and 2j+1 share the Philox block at counter (j, tensor, kPerturbationWord3): words 0
// and 1 give their Gaussian or uniform values, words 2 and 3 their sparsity masks (element zeroed
// when (word >> 8) < p_zero · 2^24).
inline constexpr uint32_t kPerturbationWord3 = 0x5A4F;  // the counter's last word
inline Philox4x32 perturbation_block(uint64_t seed, uint32_t tensor, uint64_t j) {
  return philox4x32(
      {static_cast<uint32_t>(j), static_cast<uint32_t>(j >> 32), tensor, kPerturbationWord3}, seed);
}
// Signs (Rademacher, and the integer step's ternary z) need one bit, so 128 elements share a
// block, from a stream of their own: element i is +1 where bit i % 128 of the block at counter
// (i / 128, tensor, kSignWord3) is set (bit k is bit k % 32 of word k / 32), else −1.
inline constexpr uint32_t kSignWord3 = 0x5A53;
inline constexpr int64_t kSignsPerBlock = 128;
inline Philox4x32 sign_block(uint64_t seed, uint32_t tensor, uint64_t j) {
  return philox4x32({static_cast<uint32_t>(j), static_cast<uint32_t>(j >> 32), tensor, kSignWord3},
                    seed);
}
// Bit k of the sign blocks in `words` (4 words a block), 1 for +1.
inline uint32_t sign_bit(const uint32_t* words, int64_t k) {
  return (words[k / 32] >> (k % 32)) & 1u;
}

// z_i for element i of tensor `tensor` under `seed`.
float perturbation(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor, uint64_t i);

// dst[k] = src[k] + scale * z_{begin + k} for k in [0, end - begin): src and dst hold the
// range's elements only (dst may equal src). Any split of [0, n) into ranges gives the same
// values. With max_abs > 0 only the elements with |src[k]| <= max_abs move, the others are
// copied (magnitude-aware sparse ZO: perturb the small weights).
void add_perturbation(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor, float scale,
                      const float* src, float* dst, int64_t begin, int64_t end,
                      float max_abs = 0.0f);

// dst[i] = src[i] + scale * z[i] for i in [0, n), with add_perturbation's max_abs rule and the
// same bits: a perturbation drawn once (perturbation_values) applied at +scale and at −scale.
void add_values(const float* z, float scale, const float* src, float* dst, int64_t n,
                float max_abs = 0.0f);

// z[k] = z_{begin + k} for k in [0, end - begin).
void perturbation_values(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor,
                         int64_t begin, int64_t end, float* z);

// The seed of sample `sample` of step `step` of a run: distinct streams for distinct triples.
inline uint64_t sample_seed(uint64_t run_seed, int64_t step, int sample) {
  Philox4x32 w = philox4x32({static_cast<uint32_t>(step), static_cast<uint32_t>(step >> 32),
                             static_cast<uint32_t>(sample), 0x5EED},
                            run_seed);
  return (static_cast<uint64_t>(w[0]) << 32) | w[1];
}

}  // namespace zotrain::zo

namespace zotrain {
template <>
struct Names<zo::Distribution> {
  static constexpr NameOf<zo::Distribution> list[] = {{zo::Distribution::kGaussian, "gaussian"},
                                                      {zo::Distribution::kRademacher, "rademacher"},
                                                      {zo::Distribution::kUniform, "uniform"}};
};
template <>
struct Names<zo::Mask> {
  static constexpr NameOf<zo::Mask> list[] = {{zo::Mask::kRandom, "random"},
                                              {zo::Mask::kMagnitude, "magnitude"}};
};
}  // namespace zotrain
