// Activity perturbation: a linear layer y_b = W x_b + c estimated by perturbing its outputs, not
// its weights (the forward-gradient form of Ren et al., "Scaling Forward Gradient With Local
// Losses", ICLR 2023, as finite differences). Sample s moves example b's output by ±ε u_{s,b},
// u drawn per element from the sample's seed as weight perturbations are; each example's own
// loss difference gives δ_{s,b} = (ℓ_b(+) − ℓ_b(−)) / 2ε ≈ ∇_{y_b}ℓ_b · u_{s,b}, and with L the
// batch's mean loss
//   ∇_W L ≈ (1 / qB) Σ_s Σ_b δ_{s,b} u_{s,b} x_b^T,   ∇_c L ≈ (1 / qB) Σ_s Σ_b δ_{s,b} u_{s,b}.
// Unbiased, and its noise is that of the layer's `out` outputs of each example, averaged over B
// examples, instead of that of its out·in weights: about 30x better aligned with the gradient
// for LeNet-5's fc1 (docs/reproduction.md). It needs forward passes only, each example's loss
// (so nothing after the layer may mix a batch's examples, as batch norm does), the layer's input
// and one outer product a step.
#pragma once

#include <cstdint>

#include "zotrain/core/tensor.h"
#include "zotrain/core/thread_pool.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain::zo {

// v[b, :] += coef[b] · u_b for each row b of v [rows, out], u the perturbation of `seed` on
// stream `tensor` over v's elements (the u a pass added to y of v's shape with add_perturbation).
void add_weighted_directions(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor,
                             const float* coef, Tensor& v);

// Outputs [o0, o1) of a linear layer's gradient from its output gradient v [rows, out] and input
// x [rows, in]: dw [o1 - o0, in] = (v^T x)[o0, o1), db [o1 - o0] = Σ_b v_b[o0, o1). Threads split
// the outputs; the result does not depend on how, nor on the blocks a caller asks for.
void linear_gradient(const Tensor& v, const Tensor& x, int64_t o0, int64_t o1, float* dw, float* db,
                     ThreadPool* pool);

}  // namespace zotrain::zo
