#include "zotrain/zo/perturbation.h"

#include <cmath>

#include "zotrain/core/error.h"
#include "zotrain/core/rng.h"

namespace zotrain::zo {

Distribution parse_distribution(const std::string& name) {
  if (name == "gaussian") return Distribution::kGaussian;
  if (name == "rademacher") return Distribution::kRademacher;
  if (name == "uniform") return Distribution::kUniform;
  throw InputError("perturbation '" + name + "': expected gaussian, rademacher or uniform");
}

const char* distribution_name(Distribution d) {
  switch (d) {
    case Distribution::kGaussian:
      return "gaussian";
    case Distribution::kRademacher:
      return "rademacher";
    case Distribution::kUniform:
      return "uniform";
  }
  return "?";
}

namespace {

// Writes z for elements 2j and 2j+1 into z[0], z[1].
inline void pair_values(const PerturbationSpec& spec, const Philox4x32& w, float z[2]) {
  switch (spec.dist) {
    case Distribution::kGaussian: {
      // Box-Muller: both outputs of one transform, independent standard normals.
      float r = std::sqrt(-2.0f * std::log(u32_to_unit_open0(w[0])));
      float a = 6.28318530717958647692f * u32_to_unit(w[1]);
      z[0] = r * std::cos(a);
      z[1] = r * std::sin(a);
      break;
    }
    case Distribution::kRademacher:
      z[0] = (w[0] >> 31) ? 1.0f : -1.0f;
      z[1] = (w[1] >> 31) ? 1.0f : -1.0f;
      break;
    case Distribution::kUniform:
      z[0] = 1.7320508075688772f * (2.0f * u32_to_unit(w[0]) - 1.0f);
      z[1] = 1.7320508075688772f * (2.0f * u32_to_unit(w[1]) - 1.0f);
      break;
  }
  if (spec.p_zero > 0.0f) {
    if (u32_to_unit(w[2]) < spec.p_zero) z[0] = 0.0f;
    if (u32_to_unit(w[3]) < spec.p_zero) z[1] = 0.0f;
  }
}

}  // namespace

float perturbation(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor, uint64_t i) {
  float z[2] = {0.0f, 0.0f};
  pair_values(spec, perturbation_block(seed, tensor, i / 2), z);
  return z[i % 2];
}

void add_perturbation(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor, float scale,
                      const float* src, float* dst, int64_t begin, int64_t end) {
  int64_t i = begin;
  float z[2] = {0.0f, 0.0f};
  if (i < end && (i & 1)) {  // an odd start uses the second half of its pair
    pair_values(spec, perturbation_block(seed, tensor, i / 2), z);
    dst[i] = src[i] + scale * z[1];
    ++i;
  }
  for (; i + 1 < end; i += 2) {
    pair_values(spec, perturbation_block(seed, tensor, i / 2), z);
    dst[i] = src[i] + scale * z[0];
    dst[i + 1] = src[i + 1] + scale * z[1];
  }
  if (i < end) {
    pair_values(spec, perturbation_block(seed, tensor, i / 2), z);
    dst[i] = src[i] + scale * z[0];
  }
}

}  // namespace zotrain::zo
