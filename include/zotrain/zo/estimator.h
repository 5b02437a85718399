// Zeroth-order gradient estimates: each sample s gives a scalar g_s, the loss's directional
// derivative along z_s estimated from forward passes; the gradient estimate is (1/q) Σ g_s z_s,
// applied to the parameters by replaying the seeds (z is regenerated, never stored).
#pragma once

#include <cstdint>
#include <vector>

#include "zotrain/core/tensor.h"
#include "zotrain/core/thread_pool.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain::zo {

enum class Estimator {
  kSpsa,     // central: (L(θ+εz) − L(θ−εz)) / 2ε, two passes per sample
  kForward,  // forward difference: (L(θ+εz) − L(θ)) / ε, one pass per sample plus one clean pass
};

struct ProjectOptions {
  Estimator estimator = Estimator::kSpsa;
  float eps = 1e-3f;
  float clip = 0.0f;  // clip g to ±clip; 0: off
  bool sign = false;  // use sign(g) ∈ {−1, 0, +1} (ZO-signSGD)
};

// g for one sample from the loss at θ+εz and, for SPSA, at θ−εz, for forward difference at θ.
float project(const ProjectOptions& o, double loss_plus, double loss_other);

// The samples of one step: their seeds and what each projected to (g_s; for the integer
// step, the sign of its loss difference).
template <typename G>
struct Samples {
  std::vector<uint64_t> seeds;
  std::vector<G> g;
};
using Estimate = Samples<float>;

// θ ← θ − lr·d with d = (1/q) Σ_s g_s z_s; with a momentum buffer m: m ← β·m + d, θ ← θ − lr·m.
// `tensor` is the parameter's id in the perturbation streams. Threads split the elements;
// the result does not depend on how.
void apply_update(const PerturbationSpec& spec, const Estimate& est, uint32_t tensor, float lr,
                  Tensor& value, Tensor* momentum, float beta, ThreadPool* pool);

}  // namespace zotrain::zo

namespace zotrain {
template <>
struct Names<zo::Estimator> {
  static constexpr NameOf<zo::Estimator> list[] = {{zo::Estimator::kSpsa, "spsa"},
                                                   {zo::Estimator::kForward, "forward"}};
};
}  // namespace zotrain
