// Gradient checks in the style of ggml's test-backend-ops and tiny-dnn's gradient_check: the
// layer's analytic gradients (f32 backward) against central finite differences of a
// double-precision reference forward, for L = sum(y * r) with a fixed random r. In double the
// differences are exact to ~1e-10 for the piecewise-linear layers (a small step never crosses a
// kink when inputs keep away from them), so the tolerance only has to absorb f32 rounding.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "kernels/reference.h"
#include "layer_harness.h"

namespace zotrain::test {

// dL/dv by central differences (L(v + h e_i) - L(v - h e_i)) / 2h, in double.
inline ref::Vec central_differences(const std::function<double(const ref::Vec&)>& loss, ref::Vec v,
                                    double h) {
  ref::Vec g(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const double v0 = v[i];
    v[i] = v0 + h;
    const double up = loss(v);
    v[i] = v0 - h;
    const double down = loss(v);
    v[i] = v0;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

// y = f(x, params) in double, the parameters in the order of the layer's param_specs().
using RefForward = std::function<ref::Vec(const ref::Vec& x, const std::vector<ref::Vec>& params)>;

struct GradCheckOptions {
  double step = 1e-4;         // finite-difference step h
  double forward_tol = 1e-5;  // f32 forward vs the reference
  double grad_tol = 1e-5;     // analytic vs numeric gradients
};

// Checks, for a layer and an input x (its parameters are drawn from `seed`):
// - forward against the reference;
// - dx and every parameter gradient against central differences of the reference;
// - backward ADDS into the bound gradients, also when dx is empty, and overwrites dx;
// - without bound gradients, backward gives the same dx.
inline void check_gradients(Layer& layer, const Tensor& x, const RefForward& reference,
                            uint64_t seed, const GradCheckOptions& opt = {}) {
  constexpr float kGradFill = 0.25f;  // gradients start non-zero to check that backward adds
  std::vector<Tensor> params = bind_random_params(layer, seed, kGradFill);
  std::vector<Tensor> grads = layer.grads();
  TestContext tc(layer, x.shape(), nullptr);
  Tensor y = nan_tensor(layer.output_shape(x.shape()));
  Tensor r = random_uniform(y.shape(), seed, 1);
  Tensor dx = nan_tensor(x.shape());
  layer.forward(x, y, tc.ctx);
  layer.backward(x, y, r, dx, tc.ctx);

  const ref::Vec x64 = ref::to_vec(x), r64 = ref::to_vec(r);
  std::vector<ref::Vec> p64;
  for (const Tensor& p : params) p64.push_back(ref::to_vec(p));
  EXPECT_TRUE(all_close("y", y.data(), reference(x64, p64), opt.forward_tol));

  auto loss = [&](const ref::Vec& xv, const std::vector<ref::Vec>& pv) {
    ref::Vec yv = reference(xv, pv);
    double l = 0.0;
    for (size_t i = 0; i < yv.size(); ++i) l += yv[i] * r64[i];
    return l;
  };
  ref::Vec numeric_dx =
      central_differences([&](const ref::Vec& xv) { return loss(xv, p64); }, x64, opt.step);
  EXPECT_TRUE(all_close("dx", dx.data(), numeric_dx, opt.grad_tol));

  std::vector<Tensor> first(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    const std::string name = layer.param_specs()[i].name;
    std::vector<ref::Vec> pv = p64;
    ref::Vec numeric = central_differences(
        [&](const ref::Vec& v) {
          pv[i] = v;
          return loss(x64, pv);
        },
        p64[i], opt.step);
    for (double& g : numeric) g += kGradFill;
    EXPECT_TRUE(all_close("d" + name, grads[i].data(), numeric, opt.grad_tol));
    first[i] = grads[i].clone();
  }

  // A second backward without dx adds the same gradients again (up to the rounding of adding
  // them to different starting values).
  Tensor no_dx;
  layer.backward(x, y, r, no_dx, tc.ctx);
  for (size_t i = 0; i < grads.size(); ++i) {
    ref::Vec twice(grads[i].numel());
    for (int64_t j = 0; j < grads[i].numel(); ++j) twice[j] = 2.0 * first[i][j] - kGradFill;
    EXPECT_TRUE(all_close("twice d" + layer.param_specs()[i].name, grads[i].data(), twice, 1e-5));
  }

  // Without gradient buffers (a frozen layer), dx is unchanged.
  layer.bind(params, {});
  Tensor dx_frozen = nan_tensor(x.shape());
  layer.backward(x, y, r, dx_frozen, tc.ctx);
  EXPECT_TRUE(bitwise_equal(dx_frozen, dx)) << "dx without bound gradients";
}

}  // namespace zotrain::test
