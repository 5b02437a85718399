#include "zotrain/zo/estimator.h"

#include <algorithm>
#include <string>

#include "zotrain/core/error.h"

namespace zotrain::zo {

float project(const ProjectOptions& o, double loss_plus, double loss_other) {
  double g = o.estimator == Estimator::kSpsa ? (loss_plus - loss_other) / (2.0 * o.eps)
                                             : (loss_plus - loss_other) / o.eps;
  if (o.sign) return g > 0 ? 1.0f : g < 0 ? -1.0f : 0.0f;
  if (o.clip > 0) g = std::clamp(g, -static_cast<double>(o.clip), static_cast<double>(o.clip));
  return static_cast<float>(g);
}

void apply_update(const PerturbationSpec& spec, const Estimate& est, uint32_t tensor, float lr,
                  Tensor& value, Tensor* momentum, float beta, ThreadPool* pool) {
  const float inv_q = 1.0f / static_cast<float>(est.g.size());
  float* w = value.data();
  float* m = momentum && !momentum->empty() ? momentum->data() : nullptr;
  parallel_for(pool, value.numel(), [&](int64_t b, int64_t e) {
    if (m) {
      for (int64_t i = b; i < e; ++i) m[i] *= beta;
      for (size_t s = 0; s < est.g.size(); ++s)
        add_perturbation(spec, est.seeds[s], tensor, est.g[s] * inv_q, m, m, b, e);
      for (int64_t i = b; i < e; ++i) w[i] -= lr * m[i];
    } else {
      for (size_t s = 0; s < est.g.size(); ++s)
        add_perturbation(spec, est.seeds[s], tensor, -lr * est.g[s] * inv_q, w, w, b, e);
    }
  });
}

}  // namespace zotrain::zo
