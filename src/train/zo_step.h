// The one loop of a zeroth-order step, for every precision: q samples, sample s perturbing the
// parameters along z_s (its seed named by the run's seed, the step and s), each run at +z_s
// and, two-sided, at −z_s; each sample's losses projected to its coefficient g_s; then one
// update from the samples. The engines supply the three parts: how passes run (one at a time,
// or several at once in lanes), what a loss pair projects to (an SPSA or forward difference in
// f32, the sign of an integer loss difference in int8) and the update rule (SGD on the
// parameters, NITI's bit-width rule, master weights re-quantized for int8-npu). It is
// integer-only code, so the NITI step (compiled without floating point) runs it too.
#pragma once

#include <cstdint>
#include <vector>

#include "zotrain/zo/estimator.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain::zo {

// One perturbed pass: the parameters at θ + sign·ε·z(seed).
struct Direction {
  uint64_t seed;
  int sign;  // +1 or −1
};

struct StepShape {
  uint64_t run_seed = 0;
  int64_t step = 0;  // optimizer steps so far
  int q = 1;
  bool two_sided = true;  // SPSA: +z and −z; else +z only (against a clean pass)
};

// What a step's loop keeps: its passes' directions and losses and the samples. A caller that
// keeps one across steps makes no heap calls after the first step that fills it (the device
// program makes none at all: it reserves for its q first).
template <typename Loss, typename G>
struct StepBuffers {
  std::vector<Direction> dirs;
  std::vector<Loss> loss;
  Samples<G> samples;
  void reserve(int q) {
    dirs.reserve(2 * static_cast<size_t>(q));
    loss.reserve(2 * static_cast<size_t>(q));
    samples.seeds.reserve(static_cast<size_t>(q));
    samples.g.reserve(static_cast<size_t>(q));
  }
};

// Runs the step: passes(dirs, loss) fills loss[i] with the loss of the pass along dirs[i] (in
// order: the passes may keep state, such as a head's gradient, across them); project(plus,
// other) gives g_s from the loss at +z_s and the one at −z_s (or `clean`, one-sided); then
// update(samples). Returns the losses of the passes (in `b`).
template <typename Loss, typename G, typename Passes, typename Project, typename Update>
const std::vector<Loss>& run_step(StepBuffers<Loss, G>& b, const StepShape& s, const Loss& clean,
                                  Passes&& passes, Project&& project, Update&& update) {
  b.dirs.clear();
  for (int i = 0; i < s.q; ++i) {
    const uint64_t seed = sample_seed(s.run_seed, s.step, i);
    b.dirs.push_back({seed, 1});
    if (s.two_sided) b.dirs.push_back({seed, -1});
  }
  b.loss.assign(b.dirs.size(), Loss{});
  passes(b.dirs, b.loss.data());
  const size_t per_sample = s.two_sided ? 2 : 1;
  b.samples.seeds.clear();
  b.samples.g.clear();
  for (size_t i = 0; i < b.dirs.size(); i += per_sample) {
    b.samples.seeds.push_back(b.dirs[i].seed);
    b.samples.g.push_back(project(b.loss[i], s.two_sided ? b.loss[i + 1] : clean));
  }
  update(b.samples);
  return b.loss;
}

// The same with buffers of its own.
template <typename Loss, typename Passes, typename Project, typename Update>
std::vector<Loss> run_step(const StepShape& s, const Loss& clean, Passes&& passes,
                           Project&& project, Update&& update) {
  StepBuffers<Loss, decltype(project(clean, clean))> b;
  return run_step(b, s, clean, passes, project, update);
}

}  // namespace zotrain::zo
