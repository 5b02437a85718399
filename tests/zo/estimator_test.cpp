// Statistical tests of the ZO estimators on a small MLP with fixed seeds: the average of many
// estimates approaches the backprop gradient, and SPSA's error falls as ε shrinks.
#include "zotrain/zo/estimator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/loss.h"
#include "zotrain/core/rng.h"
#include "zotrain/models/model.h"
#include "zotrain/nn/network.h"

namespace zotrain::zo {
namespace {

constexpr int64_t kBatch = 32;

struct Fixture {
  ModelSpec spec = model_by_name("mlp:16", Shape{1, 4, 4}, 3);
  Network bp{spec.item_shape, spec.layers}, zo{spec.item_shape, spec.layers};
  Arena arena;
  std::vector<uint8_t> labels;

  Fixture() {
    bp.allocate(arena, kBatch, 0, nullptr, 11);
    zo.allocate(arena, kBatch, zo.num_layers(), nullptr, 11);
    Rng rng(3, 3);
    for (Network* n : {&bp, &zo}) {
      Rng r(3, 4);
      Tensor x = n->input(kBatch);
      for (int64_t i = 0; i < x.numel(); ++i) x[i] = r.normal();
    }
    for (int64_t i = 0; i < kBatch; ++i) labels.push_back(static_cast<uint8_t>(rng.below(3)));
    Tensor dl = bp.logits_grad(kBatch);
    softmax_cross_entropy(bp.forward(kBatch), labels.data(), &dl, nullptr);
    bp.zero_grad();
    bp.backward(dl);
  }

  double loss(const PerturbationSpec& spec, uint64_t seed, float scale) {
    ParamTransform t = [&](const ParamRef& p, float* dst, int64_t b, int64_t e) {
      add_perturbation(spec, seed, static_cast<uint32_t>(p.index), scale, p.value.data() + b, dst,
                       b, e);
    };
    return softmax_cross_entropy(zo.forward(kBatch, &t), labels.data(), nullptr, nullptr);
  }

  // z · ∇L by backprop.
  double directional(const PerturbationSpec& spec, uint64_t seed) {
    double d = 0;
    for (const ParamRef& p : bp.params())
      for (int64_t i = 0; i < p.grad.numel(); ++i)
        d += p.grad[i] * perturbation(spec, seed, static_cast<uint32_t>(p.index), i);
    return d;
  }

  // Cosine between the average of q SPSA estimates and the backprop gradient.
  double cosine(const PerturbationSpec& spec, int q, float eps) {
    Estimate est;
    for (int s = 0; s < q; ++s) {
      uint64_t seed = sample_seed(5, 0, s);
      est.seeds.push_back(seed);
      est.g.push_back(project({Estimator::kSpsa, eps, 0, false}, loss(spec, seed, eps),
                              loss(spec, seed, -eps)));
    }
    double dot = 0, a2 = 0, b2 = 0;
    for (const ParamRef& p : bp.params()) {
      Tensor g = Tensor::zeros(p.value.shape());
      apply_update(spec, est, static_cast<uint32_t>(p.index), {Optimizer::kSgd, -1.0f}, g, {},
                   nullptr);
      for (int64_t i = 0; i < g.numel(); ++i) {
        dot += g[i] * p.grad[i];
        a2 += g[i] * g[i];
        b2 += p.grad[i] * p.grad[i];
      }
    }
    return dot / std::sqrt(a2 * b2);
  }
};

TEST(ZoEstimator, AverageOfEstimatesApproachesTheBackpropGradient) {
  Fixture f;
  for (Distribution d : {Distribution::kGaussian, Distribution::kRademacher}) {
    PerturbationSpec spec{d, 0.0f};
    double c10 = f.cosine(spec, 10, 1e-2f), c100 = f.cosine(spec, 100, 1e-2f),
           c2000 = f.cosine(spec, 2000, 1e-2f);
    // About sqrt(q / (q + n)) for n = 323 parameters: 0.17, 0.49, 0.93.
    EXPECT_LT(c10, c100) << name_of(d);
    EXPECT_LT(c100, c2000) << name_of(d);
    EXPECT_GT(c2000, 0.85) << name_of(d);
  }
}

TEST(ZoEstimator, SpsaErrorFallsWithEpsilonAndBeatsForwardDifference) {
  Fixture f;
  PerturbationSpec spec{Distribution::kGaussian, 0.0f};
  auto mean_error = [&](Estimator est, float eps) {
    double err = 0;
    for (int s = 0; s < 20; ++s) {
      uint64_t seed = sample_seed(8, 1, s);
      double other = est == Estimator::kSpsa ? f.loss(spec, seed, -eps) : f.loss(spec, seed, 0);
      err += std::fabs(project({est, eps, 0, false}, f.loss(spec, seed, eps), other) -
                       f.directional(spec, seed));
    }
    return err / 20;
  };
  // The MLP's ReLU kinks make the error fall more slowly than the O(ε²) of a smooth loss, but
  // every decade of ε cuts it at least in half (measured: 1.49, 0.078, 0.030, 0.0032).
  double prev = mean_error(Estimator::kSpsa, 1.0f);
  for (float eps : {0.1f, 0.01f, 0.001f}) {
    double e = mean_error(Estimator::kSpsa, eps);
    EXPECT_LT(e, prev / 2) << "eps " << eps;
    prev = e;
  }
  // Central differences beat forward differences where the curvature term dominates.
  for (float eps : {1.0f, 0.3f, 0.1f})
    EXPECT_LT(mean_error(Estimator::kSpsa, eps), mean_error(Estimator::kForward, eps) / 2) << eps;
}

TEST(ZoEstimator, PerturbedPassesLeaveTheParametersUntouched) {
  Fixture f;
  std::vector<std::vector<float>> before;
  for (const ParamRef& p : f.zo.params())
    before.emplace_back(p.value.data(), p.value.data() + p.value.numel());
  PerturbationSpec spec{Distribution::kGaussian, 0.5f};
  double plus = f.loss(spec, 77, 0.1f);
  f.loss(spec, 77, -0.1f);
  for (size_t k = 0; k < before.size(); ++k) {
    const Tensor& v = f.zo.params()[k].value;
    EXPECT_EQ(before[k], std::vector<float>(v.data(), v.data() + v.numel()));
  }
  // And the pass equals one with the perturbation written into the parameters.
  for (ParamRef& p : f.zo.params())
    add_perturbation(spec, 77, static_cast<uint32_t>(p.index), 0.1f, p.value.data(), p.value.data(),
                     0, p.value.numel());
  EXPECT_EQ(plus, softmax_cross_entropy(f.zo.forward(kBatch), f.labels.data(), nullptr, nullptr));
}

TEST(ZoEstimator, ProjectClipsAndTakesSigns) {
  EXPECT_FLOAT_EQ(project({Estimator::kSpsa, 0.5f, 0, false}, 2.0, 1.0), 1.0f);
  EXPECT_FLOAT_EQ(project({Estimator::kForward, 0.5f, 0, false}, 2.0, 1.0), 2.0f);
  EXPECT_FLOAT_EQ(project({Estimator::kSpsa, 0.01f, 5.0f, false}, 2.0, 1.0), 5.0f);
  EXPECT_FLOAT_EQ(project({Estimator::kSpsa, 0.01f, 5.0f, false}, 1.0, 2.0), -5.0f);
  EXPECT_FLOAT_EQ(project({Estimator::kSpsa, 0.01f, 0, true}, 1.0, 2.0), -1.0f);
  EXPECT_FLOAT_EQ(project({Estimator::kSpsa, 0.01f, 0, true}, 1.0, 1.0), 0.0f);
}

// The update rules against their formulas, element by element, on one tensor of n values.
struct UpdateCase {
  static constexpr int64_t n = 1500;  // more than one chunk of the update, an odd tail
  PerturbationSpec spec{Distribution::kGaussian, 0.0f};
  Estimate est{{sample_seed(1, 2, 0), sample_seed(1, 2, 1)}, {0.75f, -0.5f}};
  Tensor w = Tensor::zeros(Shape{n});
  UpdateCase() {
    for (int64_t i = 0; i < n; ++i) w[i] = 0.01f * static_cast<float>(i % 200) - 1.0f;
  }
  // d_i = (1/q) Σ_s g_s z_s,i.
  double d(int64_t i) const {
    return 0.5 * (est.g[0] * perturbation(spec, est.seeds[0], 7, i) +
                  est.g[1] * perturbation(spec, est.seeds[1], 7, i));
  }
};

TEST(ZoUpdate, SgdMomentumAndAdamFollowTheirFormulas) {
  for (Optimizer opt : {Optimizer::kSgd, Optimizer::kAdam})
    for (float beta : {0.0f, 0.9f}) {
      if (opt == Optimizer::kAdam && beta == 0.0f) continue;
      UpdateCase c;
      Tensor before = c.w.clone(), m = Tensor::zeros(c.w.shape()), v = Tensor::zeros(c.w.shape());
      for (int64_t i = 0; i < c.n; ++i) m[i] = 0.1f, v[i] = 0.01f;
      UpdateRule rule{opt, 0.01f, beta};
      rule.t = 3;
      UpdateState state{beta > 0 || opt == Optimizer::kAdam ? &m : nullptr,
                        opt == Optimizer::kAdam ? &v : nullptr};
      ThreadPool pool(2);
      apply_update(c.spec, c.est, 7, rule, c.w, state, &pool);
      for (int64_t i = 0; i < c.n; ++i) {
        const double d = c.d(i);
        double want = before[i] - 0.01 * d;
        if (opt == Optimizer::kSgd && beta > 0) want = before[i] - 0.01 * (0.9 * 0.1 + d);
        if (opt == Optimizer::kAdam) {
          const double m1 = 0.9 * 0.1 + 0.1 * d, v1 = 0.999 * 0.01 + 0.001 * d * d;
          want = before[i] - 0.01 * (m1 / (1 - std::pow(0.9, 3))) /
                                 (std::sqrt(v1 / (1 - std::pow(0.999, 3))) + kAdamEps);
        }
        ASSERT_NEAR(c.w[i], want, 1e-6) << name_of(opt) << " beta " << beta << " element " << i;
      }
    }
}

TEST(ZoUpdate, TheMagnitudeMaskKeepsTheLargeWeightsWhereTheyAre) {
  UpdateCase c;
  Tensor before = c.w.clone();
  std::vector<float> scratch(UpdateCase::n);
  // Keep 30 %: |w| at most the 30th percentile moves.
  const float t = magnitude_threshold(c.w, 0.3, scratch.data());
  int64_t at_or_below = 0;
  for (int64_t i = 0; i < c.n; ++i) at_or_below += std::fabs(before[i]) <= t;
  EXPECT_GE(at_or_below, 0.3 * c.n);
  EXPECT_LT(at_or_below, 0.3 * c.n + 0.02 * c.n);  // ties: 200 distinct values
  UpdateRule rule{Optimizer::kSgd, 0.01f};
  rule.max_abs = t;
  apply_update(c.spec, c.est, 7, rule, c.w, {}, nullptr);
  for (int64_t i = 0; i < c.n; ++i)
    ASSERT_NEAR(c.w[i], std::fabs(before[i]) <= t ? before[i] - 0.01 * c.d(i) : before[i], 1e-6)
        << i;
}

TEST(ZoUpdate, LayerScalesShareTheEnergyAndKeepItsTotal) {
  const std::vector<int64_t> d{100, 10000};
  const std::vector<double> sum_sq{100 * 0.04, 10000 * 0.0001};  // RMS 0.2 and 0.01
  auto energy = [&](const std::vector<float>& s) {
    return d[0] * s[0] * s[0] + d[1] * s[1] * s[1];
  };
  const std::vector<float> none = layer_scales(LayerScale::kNone, d, sum_sq, 0),
                           dim = layer_scales(LayerScale::kDim, d, sum_sq, 0),
                           rms = layer_scales(LayerScale::kRms, d, sum_sq, 0);
  EXPECT_EQ(none, (std::vector<float>{1, 1}));
  for (const auto& s : {dim, rms}) EXPECT_NEAR(energy(s), 10100, 1e-2);
  EXPECT_NEAR(d[0] * dim[0] * dim[0], d[1] * dim[1] * dim[1], 1e-2);  // equal shares
  EXPECT_NEAR(rms[0] / rms[1], 20.0, 1e-4);                           // the RMS ratio
  // Cyclic: one layer per step, in turn.
  EXPECT_EQ(layer_scales(LayerScale::kCyclic, d, sum_sq, 0), (std::vector<float>{1, 0}));
  EXPECT_EQ(layer_scales(LayerScale::kCyclic, d, sum_sq, 7), (std::vector<float>{0, 1}));
  // A layer of zeros keeps the unscaled radius.
  EXPECT_EQ(layer_scales(LayerScale::kRms, d, {0.0, 1.0}, 0)[0], 1.0f);
}

TEST(ZoUpdate, WeightedCyclicTurnsFollowTheLayersSizes) {
  const std::vector<int64_t> d{100, 10000, 400};
  for (double power : {-0.5, 0.5, 1.0}) {
    std::vector<double> want(d.size());
    double total = 0;
    for (size_t l = 0; l < d.size(); ++l) total += want[l] = std::pow(double(d[l]), power);
    std::vector<int64_t> turns(d.size(), 0);
    const int64_t steps = 20000;
    for (int64_t t = 0; t < steps; ++t) {
      const std::vector<float> s = layer_scales(LayerScale::kCyclic, d, {}, t, power);
      ASSERT_EQ(std::count(s.begin(), s.end(), 1.0f), 1) << t;  // one layer a step
      ASSERT_EQ(std::count(s.begin(), s.end(), 0.0f), 2) << t;
      ++turns[static_cast<size_t>(std::find(s.begin(), s.end(), 1.0f) - s.begin())];
    }
    // The golden-ratio sequence spreads the turns evenly: each share within 0.002 of its weight.
    for (size_t l = 0; l < d.size(); ++l)
      EXPECT_NEAR(double(turns[l]) / steps, want[l] / total, 2e-3) << power << " layer " << l;
  }
  // Power 0 is the plain turn, t mod L.
  for (int64_t t = 0; t < 6; ++t)
    EXPECT_EQ(layer_scales(LayerScale::kCyclic, d, {}, t, 0)[static_cast<size_t>(t % 3)], 1.0f);
}

TEST(ZoUpdate, ScaledCyclicTurnsShrinkTheLargeLayersSteps) {
  // Sizes 100, 10000, 400: geometric mean (4 · 10^8)^(1/3) = 736.8...
  const std::vector<int64_t> d{100, 10000, 400};
  const double mean = std::cbrt(100.0 * 10000.0 * 400.0);
  for (double a : {-1.0, 0.5, 1.0})
    for (int64_t t = 0; t < 3; ++t) {
      const std::vector<float> s = layer_scales(LayerScale::kCyclic, d, {}, t, 0, a);
      const auto l = static_cast<size_t>(t);
      // The turn is unchanged (layer t mod 3, the others 0); its s_l^2 is (mean / d_l)^a.
      EXPECT_EQ(std::count(s.begin(), s.end(), 0.0f), 2) << a << " step " << t;
      EXPECT_NEAR(double(s[l]) * s[l], std::pow(mean / double(d[l]), a), 1e-5 * s[l] * s[l])
          << a << " layer " << l;
    }
  // With the weighted turns, the layer picked is the same as unscaled.
  for (int64_t t = 0; t < 50; ++t) {
    const std::vector<float> plain = layer_scales(LayerScale::kCyclic, d, {}, t, 0.5);
    const std::vector<float> scaled = layer_scales(LayerScale::kCyclic, d, {}, t, 0.5, 1.0);
    for (size_t k = 0; k < d.size(); ++k) EXPECT_EQ(plain[k] == 0, scaled[k] == 0) << t;
  }
}

TEST(ZoUpdate, NormalizationDividesByTheRunningRms) {
  float state[2] = {0, 0};
  Estimate est{{1, 2}, {3.0f, -4.0f}};
  normalize(est, 0.99f, state);
  // The first step's σ is its own RMS, sqrt((9 + 16) / 2).
  EXPECT_NEAR(est.g[0], 3.0 / std::sqrt(12.5), 1e-6);
  EXPECT_NEAR(est.g[1], -4.0 / std::sqrt(12.5), 1e-6);
  // A loss scaled by 1000 gives the same normalized steps.
  float small_state[2] = {0, 0}, big_state[2] = {0, 0};
  for (int step = 0; step < 50; ++step) {
    Estimate a{{1}, {static_cast<float>(1 + step % 3)}};
    Estimate b{{1}, {1000.0f * static_cast<float>(1 + step % 3)}};
    normalize(a, 0.99f, small_state);
    normalize(b, 0.99f, big_state);
    EXPECT_NEAR(a.g[0], b.g[0], 1e-4 * std::fabs(a.g[0])) << step;
  }
}

// Per-layer scaling is a preconditioner: the average of scaled estimates approaches S²∇, the
// backprop gradient with layer l's part multiplied by s_l².
TEST(ZoEstimator, LayerScaledEstimatesApproachThePreconditionedGradient) {
  Fixture f;
  PerturbationSpec spec{Distribution::kGaussian, 0.0f};
  std::vector<int64_t> d;
  std::vector<int> group;
  for (const ParamRef& p : f.zo.params()) {
    if (d.empty() || group.empty() || f.zo.params()[group.size() - 1].layer != p.layer)
      d.push_back(0);
    d.back() += p.value.numel();
    group.push_back(static_cast<int>(d.size()) - 1);
  }
  const std::vector<float> s = layer_scales(LayerScale::kDim, d, {}, 0);
  ASSERT_GT(s.size(), 1u);
  const float eps = 1e-2f;
  Estimate est;
  for (int k = 0; k < 2000; ++k) {
    const uint64_t seed = sample_seed(6, 0, k);
    auto loss = [&](float sign) {
      ParamTransform t = [&](const ParamRef& p, float* dst, int64_t b, int64_t e) {
        add_perturbation(spec, seed, static_cast<uint32_t>(p.index), sign * eps * s[group[p.index]],
                         p.value.data() + b, dst, b, e);
      };
      return softmax_cross_entropy(f.zo.forward(kBatch, &t), f.labels.data(), nullptr, nullptr);
    };
    est.seeds.push_back(seed);
    est.g.push_back(project({Estimator::kSpsa, eps, 0, false}, loss(1), loss(-1)));
  }
  double dot = 0, a2 = 0, b2 = 0;
  for (const ParamRef& p : f.bp.params()) {
    const float sl = s[group[p.index]];
    Tensor g = Tensor::zeros(p.value.shape());
    apply_update(spec, est, static_cast<uint32_t>(p.index), {Optimizer::kSgd, -sl}, g, {}, nullptr);
    for (int64_t i = 0; i < g.numel(); ++i) {
      const double want = sl * sl * p.grad[i];
      dot += g[i] * want, a2 += g[i] * g[i], b2 += want * want;
    }
  }
  EXPECT_GT(dot / std::sqrt(a2 * b2), 0.85);
}

}  // namespace
}  // namespace zotrain::zo
