// Perturbations for zeroth-order training, never stored: element i of the perturbation of
// tensor t under seed s is a pure function of (s, t, i), computed from one Philox block per
// pair of elements. The same z comes out on any thread count, order, platform or process.
#pragma once

#include <cstdint>
#include <string>

namespace zotrain::zo {

enum class Distribution {
  kGaussian,    // N(0, 1)
  kRademacher,  // ±1
  kUniform,     // uniform on [-sqrt(3), sqrt(3)]: unit variance like the others
};
Distribution parse_distribution(const std::string& name);  // InputError for unknown names
const char* distribution_name(Distribution d);

struct PerturbationSpec {
  Distribution dist = Distribution::kGaussian;
  float p_zero = 0.0f;  // each element is zeroed with this probability (sparse ZO)
};

// z_i for element i of tensor `tensor` under `seed`.
float perturbation(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor, uint64_t i);

// dst[i] = src[i] + scale * z_i for i in [begin, end) (dst may equal src). Any split of
// [0, n) into ranges gives the same values.
void add_perturbation(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor, float scale,
                      const float* src, float* dst, int64_t begin, int64_t end);

// The seed of sample `sample` of step `step` of a run: distinct streams for distinct triples.
uint64_t sample_seed(uint64_t run_seed, int64_t step, int sample);

}  // namespace zotrain::zo
