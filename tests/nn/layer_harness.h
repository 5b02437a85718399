// Running a Layer in a test without a Network: parameters and gradient buffers owned by the
// test, a workspace sized by the layer, and the check that results do not depend on the
// thread count.
#pragma once

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "test_util.h"
#include "zotrain/nn/layer.h"

namespace zotrain::test {

// Binds parameters uniform in ±1 (stream 100 + i of `seed`) and gradient buffers filled with
// grad_fill; returns the parameters.
inline std::vector<Tensor> bind_random_params(Layer& layer, uint64_t seed, float grad_fill) {
  std::vector<Tensor> params, grads;
  for (const ParamSpec& p : layer.param_specs()) {
    params.push_back(random_uniform(p.shape, seed, 100 + params.size()));
    grads.push_back(Tensor::zeros(p.shape));
    grads.back().fill(grad_fill);
  }
  layer.bind(params, grads);
  return params;
}

// An ExecContext with a workspace of the size the layer asks for on `in`, and the kept
// activations it asks for as a head layer (Layer::kept_floats), each followed by a guard band
// that catches a layer using more than it declared.
struct TestContext {
  static constexpr size_t kGuard = 64;
  static constexpr float kGuardValue = 12345.0f;

  TestContext(const Layer& layer, const Shape& in, ThreadPool* pool)
      : TestContext(layer.workspace_floats(in, pool ? pool->size() : 1), pool) {
    kept_size = layer.kept_floats(in);
    kept.assign(kept_size + kGuard, kGuardValue);
    if (kept_size > 0) ctx.kept = kept.data();
  }
  TestContext(size_t floats, ThreadPool* pool)
      : size(floats), workspace(size + kGuard, kGuardValue) {
    ctx.pool = pool;
    ctx.workspace = workspace.data();
  }
  ~TestContext() {
    for (size_t i = size; i < workspace.size(); ++i)
      EXPECT_EQ(workspace[i], kGuardValue) << "workspace overrun past " << size << " floats";
    for (size_t i = kept_size; i < kept.size(); ++i)
      EXPECT_EQ(kept[i], kGuardValue) << "kept activations overrun past " << kept_size;
  }
  size_t size, kept_size = 0;
  std::vector<float> workspace, kept;
  ExecContext ctx;
};

// A tensor of the given shape whose every element is NaN, so that an element a layer forgets to
// write shows up in any comparison.
inline Tensor nan_tensor(const Shape& shape) {
  Tensor t = Tensor::zeros(shape);
  t.fill(std::numeric_limits<float>::quiet_NaN());
  return t;
}

// What one forward and one backward (into zeroed gradients) produce.
struct Pass {
  Tensor y, dx;
  std::vector<Tensor> grads;
};

inline Pass run_pass(Layer& layer, const Tensor& x, const Tensor& dy, ThreadPool* pool) {
  Pass p;
  for (const Tensor& param : layer.params()) p.grads.push_back(Tensor::zeros(param.shape()));
  layer.bind(layer.params(), p.grads);
  TestContext tc(layer, x.shape(), pool);
  p.y = nan_tensor(layer.output_shape(x.shape()));
  p.dx = nan_tensor(x.shape());
  layer.forward(x, p.y, tc.ctx);
  layer.backward(x, p.y, dy, p.dx, tc.ctx);
  return p;
}

// Forward and backward give bit-identical outputs and gradients without a pool and with pools
// of 1, 2 and 3 threads.
inline void expect_same_for_any_thread_count(Layer& layer, const Shape& in, uint64_t seed) {
  bind_random_params(layer, seed, 0.0f);
  Tensor x = random_uniform(in, seed, 0);
  Tensor dy = random_uniform(layer.output_shape(in), seed, 1);
  Pass want = run_pass(layer, x, dy, nullptr);
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    ThreadPool pool(threads);
    Pass got = run_pass(layer, x, dy, &pool);
    EXPECT_TRUE(bitwise_equal(got.y, want.y)) << "y";
    EXPECT_TRUE(bitwise_equal(got.dx, want.dx)) << "dx";
    for (size_t i = 0; i < want.grads.size(); ++i)
      EXPECT_TRUE(bitwise_equal(got.grads[i], want.grads[i])) << "gradient " << i;
  }
}

// Forward reads the parameters in ctx.params when given (a perturbed copy) instead of the bound
// ones: the result equals a forward with those parameters bound.
inline void expect_forward_uses_context_params(Layer& layer, const Shape& in, uint64_t seed) {
  std::vector<Tensor> bound = bind_random_params(layer, seed, 0.0f);
  std::vector<Tensor> other = bind_random_params(layer, seed + 1, 0.0f);
  Tensor x = random_uniform(in, seed, 0);
  TestContext tc(layer, in, nullptr);
  Tensor want = nan_tensor(layer.output_shape(in));
  layer.forward(x, want, tc.ctx);
  layer.bind(bound, {});
  tc.ctx.params = other.data();
  Tensor got = nan_tensor(want.shape());
  layer.forward(x, got, tc.ctx);
  EXPECT_TRUE(bitwise_equal(got, want));
}

}  // namespace zotrain::test
