#include "zotrain/train/int8_step.h"

#include <vector>

#include "zotrain/kernels/int8.h"
#include "zotrain/nn/int8/int_loss.h"
#include "zotrain/zo/perturbation.h"
#include "zotrain/zo/ternary.h"

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
  std::vector<uint64_t> seeds;
  std::vector<int> signs;
  int64_t loss_sum = 0;
  for (int s = 0; s < cfg.q; ++s) {
    const uint64_t seed = zo::sample_seed(cfg.seed, cfg.step, s);
    int64_t loss[2], exact_loss[2] = {0, 0};
    for (int side = 0; side < 2; ++side) {
      const int eps = side == 0 ? cfg.eps : -cfg.eps;
      const QWeightTransform perturbed = [&](const QWeight& w, int8_t* dst, int64_t b, int64_t e) {
        zo::add_ternary(seed, w.tensor, cfg.zero_threshold, eps, w.value.data, dst, b, e);
      };
      const QTensor logits = net.forward(rows, &perturbed);
      loss[side] = sign_loss ? (*sign_loss)(logits, labels)
                             : cross_entropy(logits, labels, cfg.loss_frac_bits);
      if (exact) exact_loss[side] = exact == sign_loss ? loss[side] : (*exact)(logits, labels);
      loss_sum += !sign_loss && cfg.loss_frac_bits == kGradFracBits
                      ? loss[side]
                      : cross_entropy(logits, labels, kGradFracBits);
      if (s == 0 && side == 0) r.correct = count_correct(logits, labels);
      if (has_head) backprop(net, logits, labels);
    }
    const int sign = sign_of(loss[0] - loss[1]);
    seeds.push_back(seed);
    signs.push_back(sign);
    ++r.signs;
    r.zero_signs += sign == 0;
    if (exact) r.agree += sign == sign_of(exact_loss[0] - exact_loss[1]);
  }
  r.loss = loss_sum / (2 * cfg.q);
  // Body: W <- clip(W - g), g = Σ_s sign_s · z_s brought to zo_bits bits.
  int32_t* acc = net.accumulators();
  for (QWeight& w : net.weights()) {
    if (w.layer >= net.head()) continue;
    const int64_t n = w.value.numel();
    for (int64_t i = 0; i < n; ++i) acc[i] = 0;
    for (size_t s = 0; s < seeds.size(); ++s)
      if (signs[s] != 0)
        zo::accumulate_ternary(seeds[s], w.tensor, cfg.zero_threshold, signs[s], acc, n);
    const int shift = kernels::range_bits(acc, n) - cfg.zo_bits;
    for (int64_t i = 0; i < n; ++i)
      w.value.data[i] =
          kernels::clip_s8(w.value.data[i] - kernels::psto_shift(acc[i], shift > 0 ? shift : 0));
  }
  if (has_head) net.update_head(cfg.bp_bits);
  return r;
}

}  // namespace zotrain::int8
