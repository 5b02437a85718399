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
// The last part of project: g clipped to ±o.clip, or its sign.
float limit(const ProjectOptions& o, double g);

// The samples of one step: their seeds and what each projected to (g_s; for the integer
// step, the sign of its loss difference).
template <typename G>
struct Samples {
  std::vector<uint64_t> seeds;
  std::vector<G> g;
};
using Estimate = Samples<float>;

// How a step's estimate moves one tensor.
enum class Optimizer {
  kSgd,   // θ ← θ − lr·d, or with momentum β: m ← β·m + d, θ ← θ − lr·m
  kAdam,  // ZO-AdaMM: Adam's per-coordinate steps from the seed-replayed estimate d
};

struct UpdateRule {
  Optimizer optimizer = Optimizer::kSgd;
  float lr = 0.0f;
  float beta = 0.0f;     // SGD: momentum (needs state.m); Adam: β1
  float beta2 = 0.999f;  // Adam
  int64_t t = 1;         // Adam: 1-based update count, for the bias corrections
  // > 0: the magnitude mask of the passes: z_i = 0 where |θ_i| > max_abs, θ read before the
  // update (as the random mask's zeros, the optimizer's state still moves); 0: no mask.
  float max_abs = 0.0f;
};

// The optimizer state of one tensor, each the tensor's size: SGD's momentum (or none), Adam's
// first and second moments.
struct UpdateState {
  Tensor* m = nullptr;
  Tensor* v = nullptr;
};

// Adam's ε, added to the root of the second moment.
inline constexpr float kAdamEps = 1e-8f;

// Applies d = (1/q) Σ_s g_s z_s to `value` under `rule`. `tensor` is the parameter's id in the
// perturbation streams. Threads split the elements; the result does not depend on how.
void apply_update(const PerturbationSpec& spec, const Estimate& est, uint32_t tensor,
                  const UpdateRule& rule, Tensor& value, UpdateState state, ThreadPool* pool);

// Applies a dense gradient estimate of elements [begin, end) of `value`, d[0, end - begin), under
// `rule` (its max_abs unused: nothing was masked), with the same optimizer rules as apply_update.
void apply_gradient(const float* d, int64_t begin, int64_t end, const UpdateRule& rule,
                    Tensor& value, UpdateState state, ThreadPool* pool);

// FZOO-style normalization of a step's samples: g_s ← g_s / σ with σ² the running mean of g²
// (an exponential average with weight `decay` over steps, bias-corrected, this step's samples
// included), so that the step's size no longer follows the loss's scale. `state` holds
// {Σ-weighted mean of g², the number of steps averaged}; it starts at {0, 0}.
void normalize(Estimate& est, float decay, float state[2]);

// Per-layer scaling of the perturbation (a diagonal preconditioner: a layer perturbed along
// s_l·z and moved by lr·s_l·g·z takes steps along s_l²·∇), so that a layer of 48k weights does
// not drown one of 150.
enum class LayerScale {
  kNone,
  kDim,  // s_l² ∝ 1/d_l: every layer an equal share of the perturbation's energy
  kRms,  // s_l ∝ the RMS of the layer's parameters: every layer the same relative change
  // Block-coordinate ZO: step t perturbs and moves one layer only (s = 1, the others 0), so
  // each layer's estimate carries no noise from the others' gradients: layer t mod L, or with
  // cycle_power p != 0 layer l in a share of the steps proportional to d_l^p; with
  // cycle_scale_power a != 0 the layer in turn has s_l² = (d̄ / d_l)^a (d̄ the geometric mean of
  // the sizes), so a layer's step shrinks with its size as SPSA's noise grows with it.
  kCyclic,
};

// s_l at step `step` for layers of d[l] elements whose parameters' squares sum to sum_sq[l]
// (read for kRms). kDim and kRms are normalized so that Σ d_l s_l² = Σ d_l: the perturbation's
// expected squared norm, and with it the meaning of ε and of the learning rate, stays that of
// the unscaled one. A layer with s_l = 0 is neither perturbed nor moved. `cycle_power` (kCyclic
// only) weights the layers' turns by d_l^cycle_power; `cycle_scale_power` (kCyclic only) scales
// the layer in turn.
std::vector<float> layer_scales(LayerScale mode, const std::vector<int64_t>& d,
                                const std::vector<double>& sum_sq, int64_t step,
                                double cycle_power = 0, double cycle_scale_power = 0);

// The threshold of the magnitude mask: the smallest value that at least a fraction `keep` of
// |x| is at or below; `scratch` holds x.numel() floats.
float magnitude_threshold(const Tensor& x, double keep, float* scratch);

}  // namespace zotrain::zo

namespace zotrain {
template <>
struct Names<zo::Estimator> {
  static constexpr NameOf<zo::Estimator> list[] = {{zo::Estimator::kSpsa, "spsa"},
                                                   {zo::Estimator::kForward, "forward"}};
};
template <>
struct Names<zo::LayerScale> {
  static constexpr NameOf<zo::LayerScale> list[] = {{zo::LayerScale::kNone, "none"},
                                                    {zo::LayerScale::kDim, "dim"},
                                                    {zo::LayerScale::kRms, "rms"},
                                                    {zo::LayerScale::kCyclic, "cyclic"}};
};
template <>
struct Names<zo::Optimizer> {
  static constexpr NameOf<zo::Optimizer> list[] = {{zo::Optimizer::kSgd, "sgd"},
                                                   {zo::Optimizer::kAdam, "adam"}};
};
}  // namespace zotrain
