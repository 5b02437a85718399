#include "train/int8_step.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/int8.h"
#include "nn/int8/int_loss.h"
#include "zo/ternary.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain::int8 {

namespace {

int sign_of(int64_t d) {
  return (d > 0) - (d < 0);
}

// Backprop the head from a pass's logits (NITI's integer loss gradient).
void backprop(QNetwork& net, const QTensor& logits, const uint8_t* labels) {
  QTensor dlogits = net.logits_grad(logits.shape[0]);
  cross_entropy_grad(logits, labels, dlogits);
  net.backward(dlogits);
}

}  // namespace

StepResult bp_step(QNetwork& net, int64_t rows, const uint8_t* labels, const StepConfig& cfg) {
  StepResult r;
  net.zero_grad();
  const QTensor logits = net.forward(rows);
  r.loss = cross_entropy(logits, labels, kGradFracBits);
  r.correct = count_correct(logits, labels);
  backprop(net, logits, labels);
  net.update_head(cfg.bp_bits);
  return r;
}

StepResult zo_step(QNetwork& net, int64_t rows, const uint8_t* labels, const StepConfig& cfg,
                   const PassLoss* sign_loss, const PassLoss* exact) {
  const bool has_head = net.head() < net.num_layers();
  StepResult r;
  if (has_head) net.zero_grad();
  // The body layer this step perturbs and moves (cyclic), or -1 for all of them.
  int active = -1;
  if (cfg.cyclic) {
    // Counted, then found (no list: a step makes no heap calls); weights() holds each layer's
    // weights together, in order.
    int layers = 0, last = -1;
    for (const QWeight& w : net.weights())
      if (w.layer < net.head() && w.layer != last) ++layers, last = w.layer;
    int k = layers > 0 ? static_cast<int>(cfg.step % layers) : -1;
    last = -1;
    for (const QWeight& w : net.weights())
      if (k >= 0 && w.layer < net.head() && w.layer != last) {
        last = w.layer;
        if (k-- == 0) active = w.layer;
      }
  }
  const auto moves = [&](const QWeight& w) { return active < 0 || w.layer == active; };
  dist::World* world = cfg.world;
  // Only the step's first pass moves running statistics (the engine's mode says whether).
  const auto first_pass_done = [&net] {
    if (net.mode().update_stats) net.set_mode({net.mode().training, net.mode().key, false});
  };
  const bool clean_head = has_head && cfg.clean_head;
  // By samples every rank holds the whole batch: rank 0 alone runs the clean pass, whose
  // gradient the passes' sum over the ranks then counts once.
  if (clean_head && (!world || !cfg.by_samples || world->rank() == 0)) {
    backprop(net, net.forward(rows), labels);
    first_pass_done();
  }
  const auto passes = [&](const std::vector<zo::Direction>& dirs, PassLosses* loss) {
    for (size_t i = 0; i < dirs.size(); ++i) {
      if (world && cfg.by_samples && static_cast<int>(i / 2 % world->size()) != world->rank()) {
        loss[i] = {};
        first_pass_done();
        continue;
      }
      const uint64_t seed = dirs[i].seed;
      const int eps = dirs[i].sign * cfg.eps;
      const auto perturb = [&](const QWeight& w, int8_t* dst, int64_t b, int64_t e) {
        if (moves(w))
          zo::add_ternary(seed, w.tensor, cfg.zero_threshold, eps, w.value.data, dst, b, e);
        else
          std::memcpy(dst + b, w.value.data + b, static_cast<size_t>(e - b));
      };
      const QWeightTransform perturbed = perturb;
      const QTensor logits = net.forward(rows, &perturbed);
      first_pass_done();
      PassLosses& l = loss[i];
      l.sign = sign_loss ? (*sign_loss)(logits, labels)
                         : cross_entropy(logits, labels, cfg.loss_frac_bits);
      if (exact) l.exact = exact == sign_loss ? l.sign : (*exact)(logits, labels);
      l.report = !sign_loss && cfg.loss_frac_bits == kGradFracBits
                     ? l.sign
                     : cross_entropy(logits, labels, kGradFracBits);
      if (i == 0) r.correct = count_correct(logits, labels);
      if (has_head && !clean_head) backprop(net, logits, labels);
    }
    if (!world) return;
    // Every rank's losses (and pass 0's correct rows) and the head's gradient, summed.
    std::vector<int64_t> sums;
    for (size_t i = 0; i < dirs.size(); ++i)
      sums.insert(sums.end(), {loss[i].sign, loss[i].exact, loss[i].report});
    sums.push_back(r.correct);
    world->sum(sums.data(), sums.size());
    for (size_t i = 0; i < dirs.size(); ++i)
      loss[i] = {sums[3 * i], sums[3 * i + 1], sums[3 * i + 2]};
    r.correct = sums.back();
    for (QWeight& w : net.weights())
      if (w.grad) world->sum(w.grad, static_cast<size_t>(w.value.numel()));
  };
  const auto project = [&](const PassLosses& plus, const PassLosses& minus) {
    const int sign = sign_of(plus.sign - minus.sign);
    ++r.signs;
    r.zero_signs += sign == 0;
    if (exact) r.agree += sign == sign_of(plus.exact - minus.exact);
    return sign;
  };
  // Body: W <- clip(W - g), g = Σ_s sign_s · z_s brought to zo_bits bits, z restricted to the
  // moved fraction (zo_move). The sums go through the network's accumulators; a tensor larger
  // than them is summed in chunks twice (its range first, then the move), drawing its z twice
  // rather than holding an int32 copy of it.
  const uint32_t moved = std::max(cfg.zero_threshold, cfg.move_threshold);
  const auto update = [&](const zo::Samples<int>& samples) {
    int32_t* acc = net.accumulators();
    const int64_t chunk = net.accumulator_elems();
    // The samples' g are signs. With only one of them nonzero (q = 1, or the others' losses
    // tied), g = ±z is already within zo_bits >= 1 bits: the move is W <- clip(W ∓ z), one pass
    // that draws z once.
    size_t signed_samples = 0, last = 0;
    for (size_t s = 0; s < samples.g.size(); ++s)
      if (samples.g[s] != 0) ++signed_samples, last = s;
    if (signed_samples == 0) return;
    for (QWeight& w : net.weights()) {
      if (w.layer >= net.head() || !moves(w)) continue;
      const int64_t n = w.value.numel();
      if (signed_samples == 1) {
        zo::add_ternary(samples.seeds[last], w.tensor, moved, -samples.g[last], w.value.data,
                        w.value.data, 0, n);
        continue;
      }
      const auto sum = [&](int64_t b, int64_t e) {
        for (int64_t i = 0; i < e - b; ++i) acc[i] = 0;
        for (size_t s = 0; s < samples.seeds.size(); ++s)
          if (samples.g[s] != 0)
            zo::accumulate_ternary(samples.seeds[s], w.tensor, moved, samples.g[s], acc, b, e);
      };
      int range = 0;
      for (int64_t b = 0; b < n; b += chunk) {
        const int64_t e = std::min(n, b + chunk);
        sum(b, e);
        range = std::max(range, kernels::range_bits(acc, e - b));
      }
      const int shift = std::max(range - cfg.zo_bits, 0);
      for (int64_t b = 0; b < n; b += chunk) {
        const int64_t e = std::min(n, b + chunk);
        if (n > chunk) sum(b, e);  // else still in the accumulators
        kernels::subtract_psto_shifted(acc, e - b, shift, w.value.data + b);
      }
    }
  };
  int64_t loss_sum = 0;
  StepBuffers own;
  for (const PassLosses& l :
       zo::run_step(cfg.buffers ? *cfg.buffers : own, {cfg.seed, cfg.step, cfg.q, true},
                    PassLosses{}, passes, project, update))
    loss_sum += l.report;
  r.loss = loss_sum / (2 * cfg.q);
  if (has_head) net.update_head(cfg.bp_bits);
  return r;
}

}  // namespace zotrain::int8
