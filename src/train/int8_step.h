// One training step of the integer network (NITI int8, ElasticZO-INT8), for every method: Full
// BP (head_start 0), Full ZO and the hybrids. Integer arithmetic only — the file is compiled a
// second time with floating point disabled — except inside the optional PassLoss callbacks, which
// the INT8 variant (float loss difference) and the sign-agreement diagnostic supply.
#pragma once

#include <cstdint>
#include <functional>

#include "train/zo_step.h"
#include "zotrain/dist/world.h"
#include "zotrain/nn/int8/qnetwork.h"

namespace zotrain::int8 {

// What a pass measures: the loss whose sign drives the body, `exact`'s (for the agreement
// count) and the loss reported in 2^-kGradFracBits bits.
struct PassLosses {
  int64_t sign = 0, exact = 0, report = 0;
};
using StepBuffers = zo::StepBuffers<PassLosses, int>;

struct StepConfig {
  uint64_t seed = 0;  // the run's seed (perturbation seeds are drawn from it and the step)
  int64_t step = 0;   // optimizer steps so far
  int q = 1;          // perturbation samples
  int eps = 1;        // perturbation radius in weight mantissa units
  uint32_t zero_threshold = 0;  // sparsity of z (zo::zero_threshold)
  // The body's move touches the z of this threshold when it is higher (zo::move_threshold: a
  // random fraction of the perturbed weights, an integer step below one unit on average).
  uint32_t move_threshold = 0;
  int bp_bits = 5;         // bit width of the head's updates
  int zo_bits = 1;         // bit width of the body's updates
  int loss_frac_bits = 0;  // fraction bits of the integer loss whose sign drives ZO (0: Eq. 12)
  // Block-coordinate ZO (zo_layer_scale cyclic): step t perturbs and moves only the body's
  // (t mod L)-th layer with weights, so each step's ±1 moves touch one layer.
  bool cyclic = false;
  // Elastic (head_grad clean): the head's gradient from one extra pass of the unperturbed
  // weights, run first (so it moves batch norm's statistics), instead of from the perturbed ones.
  bool clean_head = false;
  // A distributed step (docs/distributed.md): this rank's passes — every pass on its rows of the
  // batch (`rows` given to zo_step, the network's range reduced over the ranks), or, by samples,
  // sample s when s mod N is its rank — and their integer results summed over the ranks, which
  // is exact. Null: one process.
  dist::World* world = nullptr;
  bool by_samples = false;
  // Kept across steps by the caller, so that steps make no heap calls; null: the step's own.
  StepBuffers* buffers = nullptr;
};

// A batch loss in any integer unit whose order is the loss's order (smaller is better).
using PassLoss = std::function<int64_t(const QTensor& logits, const uint8_t* labels)>;

struct StepResult {
  int64_t loss = 0;  // integer cross-entropy in 2^-kGradFracBits bits, summed over rows (mean
                     // over the passes of the step)
  int64_t correct = 0;
  // Signs of the loss differences, and with an `exact` loss how many agreed with its sign;
  // ties of the step's loss are zero signs.
  int64_t signs = 0, zero_signs = 0, agree = 0;
};

StepResult bp_step(QNetwork& net, int64_t rows, const uint8_t* labels, const StepConfig& cfg);

// Two forward passes per sample at θ ± eps·z; the body moves against sign(ℓ+ − ℓ−)·z, the head
// (if any) by NITI backprop from both passes. `sign_loss` replaces the integer loss of Eq. 12
// (INT8 instead of INT8*); with `exact`, agreement of the signs with exact's is counted.
StepResult zo_step(QNetwork& net, int64_t rows, const uint8_t* labels, const StepConfig& cfg,
                   const PassLoss* sign_loss = nullptr, const PassLoss* exact = nullptr);

}  // namespace zotrain::int8
