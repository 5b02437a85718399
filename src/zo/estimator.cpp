#include "zotrain/zo/estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "zotrain/core/error.h"

namespace zotrain::zo {

float project(const ProjectOptions& o, double loss_plus, double loss_other) {
  return limit(o, o.estimator == Estimator::kSpsa ? (loss_plus - loss_other) / (2.0 * o.eps)
                                                  : (loss_plus - loss_other) / o.eps);
}

float limit(const ProjectOptions& o, double g) {
  if (o.sign) return g > 0 ? 1.0f : g < 0 ? -1.0f : 0.0f;
  if (o.clip > 0) g = std::clamp(g, -static_cast<double>(o.clip), static_cast<double>(o.clip));
  return static_cast<float>(g);
}

namespace {

// Adam's bias corrections 1 / (1 − β^t) of its two moments.
std::pair<float, float> adam_corrections(const UpdateRule& rule) {
  const auto t = static_cast<double>(rule.t);
  return {static_cast<float>(1.0 / (1.0 - std::pow(double{rule.beta}, t))),
          static_cast<float>(1.0 / (1.0 - std::pow(double{rule.beta2}, t)))};
}

// Adam's step of elements [0, n) from their gradient estimate d.
void adam_elements(const UpdateRule& rule, std::pair<float, float> correct, const float* d,
                   int64_t n, float* w, float* m, float* v) {
  for (int64_t i = 0; i < n; ++i) {
    m[i] = rule.beta * m[i] + (1.0f - rule.beta) * d[i];
    v[i] = rule.beta2 * v[i] + (1.0f - rule.beta2) * d[i] * d[i];
    w[i] -= rule.lr * (m[i] * correct.first) / (std::sqrt(v[i] * correct.second) + kAdamEps);
  }
}

// The optimizer state's buffers (null where the rule has none).
std::pair<float*, float*> moments(const UpdateRule& rule, UpdateState state) {
  const bool adam = rule.optimizer == Optimizer::kAdam;
  ZT_ASSERT(!adam || (state.m && state.v), "Adam needs both moments");
  return {state.m && !state.m->empty() ? state.m->data() : nullptr,
          adam ? state.v->data() : nullptr};
}

}  // namespace

void apply_update(const PerturbationSpec& spec, const Estimate& est, uint32_t tensor,
                  const UpdateRule& rule, Tensor& value, UpdateState state, ThreadPool* pool) {
  constexpr int64_t kChunk = 512;
  const float inv_q = 1.0f / static_cast<float>(est.g.size());
  const bool adam = rule.optimizer == Optimizer::kAdam;
  float* w = value.data();
  // Plain pointers, not a structured binding: clang before 16 cannot capture one in a lambda.
  const std::pair<float*, float*> moment = moments(rule, state);
  float* m = moment.first;
  float* v = moment.second;
  const std::pair<float, float> correct = adam_corrections(rule);
  parallel_for(pool, value.numel(), [&](int64_t b, int64_t e) {
    if (!adam && rule.max_abs <= 0.0f) {
      // Plain SGD, the common case: z straight into θ or m, no chunk buffers.
      if (m)
        for (int64_t i = b; i < e; ++i) m[i] *= rule.beta;
      for (size_t s = 0; s < est.g.size(); ++s) {
        float* acc = m ? m : w;
        const float scale = m ? est.g[s] * inv_q : -rule.lr * est.g[s] * inv_q;
        add_perturbation(spec, est.seeds[s], tensor, scale, acc + b, acc + b, b, e);
      }
      if (m)
        for (int64_t i = b; i < e; ++i) w[i] -= rule.lr * m[i];
      return;
    }
    float z[kChunk], d[kChunk];
    bool keep[kChunk];
    for (int64_t c0 = b; c0 < e; c0 += kChunk) {
      const int64_t n = std::min(kChunk, e - c0);
      for (int64_t k = 0; k < n; ++k)
        keep[k] = rule.max_abs <= 0.0f || std::fabs(w[c0 + k]) <= rule.max_abs;
      // SGD without momentum moves θ one sample at a time, with momentum m; Adam sums d first.
      float* acc = adam ? d : m ? m + c0 : w + c0;
      if (adam) std::fill_n(d, n, 0.0f);
      if (m && !adam)
        for (int64_t k = 0; k < n; ++k) acc[k] *= rule.beta;
      for (size_t s = 0; s < est.g.size(); ++s) {
        const float scale = m || adam ? est.g[s] * inv_q : -rule.lr * est.g[s] * inv_q;
        perturbation_values(spec, est.seeds[s], tensor, c0, c0 + n, z);
        for (int64_t k = 0; k < n; ++k)
          if (keep[k]) acc[k] = acc[k] + scale * z[k];
      }
      if (adam) {
        adam_elements(rule, correct, d, n, w + c0, m + c0, v + c0);
      } else if (m) {
        for (int64_t k = 0; k < n; ++k) w[c0 + k] -= rule.lr * m[c0 + k];
      }
    }
  });
}

void apply_gradient(const float* d, int64_t begin, int64_t end, const UpdateRule& rule,
                    Tensor& value, UpdateState state, ThreadPool* pool) {
  const std::pair<float*, float*> moment = moments(rule, state);
  float* w = value.data() + begin;
  float* m = moment.first ? moment.first + begin : nullptr;
  float* v = moment.second ? moment.second + begin : nullptr;
  const std::pair<float, float> correct = adam_corrections(rule);
  parallel_for(pool, end - begin, [&](int64_t b, int64_t e) {
    if (rule.optimizer == Optimizer::kAdam) {
      adam_elements(rule, correct, d + b, e - b, w + b, m + b, v + b);
    } else if (m) {
      for (int64_t i = b; i < e; ++i) {
        m[i] = rule.beta * m[i] + d[i];
        w[i] -= rule.lr * m[i];
      }
    } else {
      for (int64_t i = b; i < e; ++i) w[i] -= rule.lr * d[i];
    }
  });
}

void normalize(Estimate& est, float decay, float state[2]) {
  double mean_sq = 0;
  for (float g : est.g) mean_sq += static_cast<double>(g) * g;
  mean_sq /= static_cast<double>(est.g.size());
  state[0] = static_cast<float>(decay * state[0] + (1.0 - decay) * mean_sq);
  state[1] += 1.0f;
  const double sigma2 = state[0] / (1.0 - std::pow(static_cast<double>(decay), state[1]));
  if (!(sigma2 > 0)) return;  // every difference zero so far: nothing to scale
  const double inv = 1.0 / std::sqrt(sigma2);
  for (float& g : est.g) g = static_cast<float>(g * inv);
}

namespace {

// The layer of step `step` when layer l takes a share of the steps proportional to d_l^power:
// where frac(step / golden ratio), a sequence that fills [0, 1) evenly whatever its length, falls
// among the layers' cumulative shares. Stateless, so a resumed run picks the same layers.
size_t weighted_turn(const std::vector<int64_t>& d, int64_t step, double power) {
  std::vector<double> cumulative(d.size());
  double total = 0;
  for (size_t l = 0; l < d.size(); ++l)
    cumulative[l] = total += std::pow(static_cast<double>(d[l]), power);
  const double u = std::fmod(static_cast<double>(step) * 0.6180339887498949, 1.0) * total;
  size_t l = 0;
  while (l + 1 < d.size() && u >= cumulative[l]) ++l;
  return l;
}

}  // namespace

std::vector<float> layer_scales(LayerScale mode, const std::vector<int64_t>& d,
                                const std::vector<double>& sum_sq, int64_t step, double cycle_power,
                                double cycle_scale_power) {
  if (mode == LayerScale::kCyclic) {
    std::vector<float> s(d.size(), 0.0f);
    if (d.empty()) return s;
    const size_t l = cycle_power == 0 ? static_cast<size_t>(step % static_cast<int64_t>(d.size()))
                                      : weighted_turn(d, step, cycle_power);
    // (d̄ / d_l)^(a/2), d̄ the geometric mean: a layer of mean size keeps the unscaled step;
    // a = 0 gives exactly 1.
    double log_mean = 0;
    for (int64_t n : d) log_mean += std::log(static_cast<double>(n));
    log_mean /= static_cast<double>(d.size());
    s[l] = static_cast<float>(
        std::exp(0.5 * cycle_scale_power * (log_mean - std::log(static_cast<double>(d[l])))));
    return s;
  }
  std::vector<double> raw(d.size(), 1.0);
  for (size_t l = 0; l < d.size(); ++l) {
    const auto n = static_cast<double>(d[l]);
    if (mode == LayerScale::kDim) raw[l] = 1.0 / std::sqrt(n);
    // A layer of zeros keeps its unscaled radius.
    if (mode == LayerScale::kRms) raw[l] = sum_sq[l] > 0 ? std::sqrt(sum_sq[l] / n) : 0.0;
  }
  double total = 0, energy = 0;
  for (size_t l = 0; l < d.size(); ++l) {
    total += static_cast<double>(d[l]);
    energy += static_cast<double>(d[l]) * raw[l] * raw[l];
  }
  std::vector<float> s(d.size(), 1.0f);
  if (!(energy > 0)) return s;
  for (size_t l = 0; l < d.size(); ++l)
    if (raw[l] > 0) s[l] = static_cast<float>(raw[l] * std::sqrt(total / energy));
  return s;
}

float magnitude_threshold(const Tensor& x, double keep, float* scratch) {
  const int64_t n = x.numel();
  ZT_ASSERT(n > 0 && keep > 0 && keep <= 1);
  for (int64_t i = 0; i < n; ++i) scratch[i] = std::fabs(x[i]);
  auto k = static_cast<int64_t>(std::ceil(keep * static_cast<double>(n))) - 1;
  k = std::clamp<int64_t>(k, 0, n - 1);
  std::nth_element(scratch, scratch + k, scratch + n);
  // The smallest positive float rather than 0, which would mean "no mask".
  return std::max(scratch[k], std::numeric_limits<float>::min());
}

}  // namespace zotrain::zo
