#include "zotrain/train/sgd.h"

namespace zotrain {

Sgd::Sgd(Network& net, Arena& arena, double momentum, double weight_decay)
    : momentum_(static_cast<float>(momentum)), weight_decay_(static_cast<float>(weight_decay)) {
  for (ParamRef& p : net.params())
    if (!p.grad.empty())
      state_.push_back(
          {&p, momentum_ > 0 ? arena.alloc(Bucket::kOptimizer, p.value.shape()) : Tensor()});
}

void Sgd::step(double lr) {
  const float a = static_cast<float>(lr);
  for (State& s : state_) {
    float* w = s.param->value.data();
    const float* g = s.param->grad.data();
    float* m = s.momentum.empty() ? nullptr : s.momentum.data();
    for (int64_t i = 0, n = s.param->value.numel(); i < n; ++i) {
      float d = g[i] + weight_decay_ * w[i];
      if (m) d = m[i] = momentum_ * m[i] + d;
      w[i] -= a * d;
    }
  }
}

}  // namespace zotrain
