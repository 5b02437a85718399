// Activity perturbation against backprop on a small MLP with fixed seeds: the average of many
// output-perturbation estimates of the first linear layer's gradient approaches the backprop one.
#include "zotrain/zo/activity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nn/loss.h"
#include "zotrain/core/rng.h"
#include "zotrain/models/model.h"
#include "zotrain/nn/network.h"

namespace zotrain::zo {
namespace {

constexpr int64_t kBatch = 16;

double cosine(const float* a, const float* b, int64_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < n; ++i) ab += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
  return ab / std::sqrt(aa * bb);
}

TEST(Activity, OutputPerturbationEstimatesTheLinearLayersGradient) {
  const ModelSpec spec = model_by_name("mlp:16", Shape{1, 4, 4}, 3);
  Network bp(spec.item_shape, spec.layers), zo(spec.item_shape, spec.layers);
  Arena arena;
  bp.allocate(arena, kBatch, 0, nullptr, 11);
  zo.allocate(arena, kBatch, zo.num_layers(), nullptr, 11);
  for (Network* n : {&bp, &zo}) {
    Rng r(3, 4);
    Tensor x = n->input(kBatch);
    for (int64_t i = 0; i < x.numel(); ++i) x[i] = r.normal();
  }
  Rng rng(3, 3);
  std::vector<uint8_t> labels;
  for (int64_t i = 0; i < kBatch; ++i) labels.push_back(static_cast<uint8_t>(rng.below(3)));
  Tensor dl = bp.logits_grad(kBatch);
  softmax_cross_entropy(bp.forward(kBatch), labels.data(), &dl, nullptr);
  bp.zero_grad();
  bp.backward(dl);

  const ParamRef& w = zo.params()[0];
  const int layer = w.layer;
  const int64_t out = w.value.shape()[0], in = w.value.numel() / out;
  std::vector<float> xs(kBatch * in), vs(kBatch * out), grad(out * in + out), coef(kBatch);
  Tensor x(xs.data(), Shape{kBatch, in}), v(vs.data(), Shape{kBatch, out});
  const PerturbationSpec dist{Distribution::kGaussian, 0.0f};
  const float eps = 1e-2f;
  const auto estimate = [&](int q) {
    v.fill(0.0f);
    std::vector<double> rows[2] = {std::vector<double>(2 * kBatch),
                                   std::vector<double>(2 * kBatch)};
    for (int s = 0; s < q; ++s) {
      const uint64_t seed = sample_seed(5, 0, s);
      for (int k = 0; k < 2; ++k) {
        const Tensor logits =
            zo.forward_trained_tapped(kBatch, layer, [&](const Tensor& input, Tensor& y) {
              x.copy_from(input.view(Shape{kBatch, in}));
              add_perturbation(dist, seed, 0, k == 0 ? eps : -eps, y.data(), y.data(), 0,
                               y.numel());
            });
        softmax_cross_entropy_rows(logits, labels.data(), rows[k].data());
      }
      for (int64_t b = 0; b < kBatch; ++b)
        coef[b] = static_cast<float>((rows[0][2 * b] - rows[1][2 * b]) / (2.0 * eps * kBatch * q));
      add_weighted_directions(dist, seed, 0, coef.data(), v);
    }
    // In two blocks of outputs, as the engine makes it.
    std::vector<float> db(out);
    linear_gradient(v, x, 0, out / 2, grad.data(), db.data(), nullptr);
    linear_gradient(v, x, out / 2, out, grad.data() + out / 2 * in, db.data() + out / 2, nullptr);
    std::copy(db.begin(), db.end(), grad.begin() + out * in);
  };
  const Tensor& gw = bp.params()[0].grad;
  const Tensor& gb = bp.params()[1].grad;
  estimate(1);
  const double one = cosine(grad.data(), gw.data(), out * in);
  estimate(4000);
  const double many = cosine(grad.data(), gw.data(), out * in);
  EXPECT_GT(one, 0.05);
  EXPECT_GT(many, 0.97) << "one sample: " << one;
  EXPECT_GT(cosine(grad.data() + out * in, gb.data(), out), 0.97);
  double norm_est = 0, norm_bp = 0;
  for (int64_t i = 0; i < out * in; ++i) norm_est += grad[i] * grad[i], norm_bp += gw[i] * gw[i];
  EXPECT_NEAR(std::sqrt(norm_est / norm_bp), 1.0, 0.1);
}

}  // namespace
}  // namespace zotrain::zo
