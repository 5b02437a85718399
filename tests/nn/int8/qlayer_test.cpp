// The integer layers against the f32 layers (themselves checked against finite differences) on
// the dequantized values: weight gradients are exact integer sums, outputs and input errors are
// within the half unit of the one rounding shift.
#include "zotrain/nn/int8/qlayer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "kernels/int8.h"
#include "zotrain/core/error.h"
#include "zotrain/core/rng.h"
#include "zotrain/core/thread_pool.h"
#include "zotrain/nn/layer_spec.h"

namespace zotrain {
namespace {

struct QBuffer {
  std::vector<int8_t> m;
  QTensor q;
  QBuffer(const Shape& s, int exp) : m(static_cast<size_t>(s.numel())), q{m.data(), s, exp} {}
  std::vector<float> values() const {
    std::vector<float> v(m.size());
    dequantize(m.data(), q.numel(), q.exp, v.data());
    return v;
  }
};

// Random mantissas with the boundaries ±127 and zeros among them.
void fill(QBuffer& b, Rng& rng) {
  for (size_t i = 0; i < b.m.size(); ++i) {
    int v = static_cast<int>(rng.below(255)) - 127;
    if (i % 17 == 0) v = 127;
    if (i % 19 == 0) v = -127;
    if (i % 5 == 0) v = 0;
    b.m[i] = static_cast<int8_t>(v);
  }
}

void check_layer(const LayerSpec& spec, const Shape& in_shape) {
  Rng rng(11, static_cast<uint64_t>(spec.op));
  std::unique_ptr<Layer> f32 = make_layer(spec, in_shape);
  std::unique_ptr<QLayer> q = make_qlayer(spec, in_shape);
  const Shape out_shape = f32->output_shape(in_shape);
  QBuffer x(in_shape, -6), y(out_shape, 0), dy(out_shape, -7), dx(in_shape, 0);
  fill(x, rng);
  fill(dy, rng);
  const Shape ws = q->weight_shape();
  QBuffer w(ws.rank ? ws : Shape{1}, -8);
  fill(w, rng);
  if (ws.rank) q->bind(w.q);
  // Forward, backward and the weight gradient (the layer trained by backprop).
  std::vector<int32_t> acc(
      static_cast<size_t>(std::max({q->acc_elems(in_shape), q->grad_acc_elems(), int64_t{1}})));
  std::vector<uint8_t> work(static_cast<size_t>(std::max<int64_t>(q->work_bytes(in_shape), 1)));
  std::vector<int16_t> stage(static_cast<size_t>(std::max<int64_t>(q->stage_elems(in_shape), 1)));
  std::vector<int32_t> ranges(static_cast<size_t>(in_shape[0]));
  QExecContext ctx{acc.data(), work.data(), nullptr, stage.data(), ranges.data()};
  q->forward(x.q, y.q, ctx);

  // The f32 layer on the same values, with a zero bias.
  std::vector<float> xf = x.values(), wf = w.values(), dyf = dy.values();
  std::vector<Tensor> params, grads;
  for (const ParamSpec& ps : f32->param_specs()) {
    Tensor p = Tensor::zeros(ps.shape);
    if (ps.name == "weight")
      for (int64_t i = 0; i < p.numel(); ++i) p[i] = wf[i];
    params.push_back(p);
    grads.push_back(Tensor::zeros(ps.shape));
  }
  f32->bind(params, grads);
  Tensor xt(xf.data(), in_shape), yt = Tensor::zeros(out_shape), dyt(dyf.data(), out_shape);
  Tensor dxt = Tensor::zeros(in_shape);
  std::vector<float> ws_f(f32->workspace_floats(in_shape, 1) + 1);
  ExecContext fctx{nullptr, ws_f.data(), nullptr};
  f32->forward(xt, yt, fctx);
  const float y_unit = std::ldexp(1.0f, y.q.exp);
  const std::vector<float> yq = y.values();
  for (int64_t i = 0; i < yt.numel(); ++i)
    ASSERT_LE(std::fabs(yq[i] - yt[i]), 0.5f * y_unit + 1e-6f * std::fabs(yt[i])) << i;

  std::vector<int64_t> grad(static_cast<size_t>(ws.rank ? ws.numel() : 1), 0);
  q->backward(x.q, y.q, dy.q, dx.q, ws.rank ? grad.data() : nullptr, ctx);
  f32->backward(xt, yt, dyt, dxt, fctx);
  const float dx_unit = std::ldexp(1.0f, dx.q.exp);
  const std::vector<float> dxq = dx.values();
  for (int64_t i = 0; i < dxt.numel(); ++i)
    ASSERT_LE(std::fabs(dxq[i] - dxt[i]), 0.5f * dx_unit + 1e-6f * std::fabs(dxt[i])) << i;
  if (ws.rank) {
    // grad · 2^(dy.exp + x.exp) is dL/dW exactly (f32 sums of small integers are exact here).
    const float scale = std::ldexp(1.0f, dy.q.exp + x.q.exp);
    for (int64_t i = 0; i < ws.numel(); ++i) ASSERT_EQ(grad[i] * scale, grads[0][i]) << i;
  }
}

TEST(QLayer, LinearMatchesF32) {
  check_layer(LayerSpec::linear(7), Shape{5, 13});
}

TEST(QLayer, Conv2dMatchesF32) {
  check_layer(LayerSpec::conv2d(4, 3, 1, 1), Shape{2, 3, 7, 6});
  check_layer(LayerSpec::conv2d(3, 5, 2, 2), Shape{2, 2, 9, 9});
}

TEST(QLayer, ReluAndPoolAreExact) {
  check_layer(LayerSpec::relu(), Shape{3, 2, 4, 4});
  check_layer(LayerSpec::max_pool(2), Shape{2, 3, 6, 5});
}

// The max pooling fused into the convolution's forward (QNetwork's forward-only passes) gives
// forward and then the pooling bit for bit, with the same exponent: an output whose largest
// magnitude is pooled away (sparse ReLU outputs in, negative weights: the exponent is still the
// unpooled tensor's), blocks of images that end inside the batch, overlapping windows, and 1
// to 3 threads.
TEST(QLayer, Conv2dMaxPooledForwardEqualsForwardThenMaxPooling) {
  struct Case {
    LayerSpec conv;
    Shape in;
    int64_t pool_k, pool_stride;
    bool negative;  // x >= 0 and sparse, weights <= 0
  };
  const Case cases[] = {{LayerSpec::conv2d(6, 5, 1, 2), Shape{11, 1, 28, 28}, 2, 2, false},
                        {LayerSpec::conv2d(16, 5), Shape{9, 6, 14, 14}, 2, 2, true},
                        {LayerSpec::conv2d(5, 3, 2, 1), Shape{4, 3, 11, 9}, 3, 2, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "input " << c.in[1] << "x" << c.in[2] << "x" << c.in[3]
                                      << ", pool k" << c.pool_k);
    std::unique_ptr<QLayer> q = make_qlayer(c.conv, c.in);
    const Shape out = make_layer(c.conv, c.in)->output_shape(c.in);
    const auto pool = kernels::Pool2dGeometry::make(out[2], out[3], c.pool_k, c.pool_stride);
    const Shape pooled{c.in[0], out[1], pool.out_h, pool.out_w};
    Rng rng(12, 0);
    QBuffer x(c.in, -6), w(q->weight_shape(), -8), want(pooled, 0), full(out, 0);
    fill(x, rng);
    fill(w, rng);
    if (c.negative) {
      for (int8_t& v : x.m) v = static_cast<int8_t>(rng.below(8) == 0 ? std::abs(int{v}) : 0);
      for (int8_t& v : w.m) v = static_cast<int8_t>(-std::abs(int{v}));
    }
    q->bind(w.q);
    std::vector<uint8_t> work(static_cast<size_t>(q->work_bytes(c.in)) * 3 + 1);
    std::vector<int32_t> ranges(static_cast<size_t>(c.in[0]));
    {
      std::vector<int32_t> acc(static_cast<size_t>(q->acc_elems(c.in)));
      std::vector<int16_t> stage(static_cast<size_t>(q->stage_elems(c.in)));
      QExecContext ctx{acc.data(), work.data(), nullptr, stage.data(), ranges.data()};
      q->forward(x.q, full.q, ctx);
      kernels::max_pool2d_s8_forward(pool, c.in[0] * out[1], full.m.data(), want.m.data());
    }
    auto amax = [](const std::vector<int8_t>& v) {
      int m = 0;
      for (int8_t e : v) m = std::max(m, std::abs(int{e}));
      return m;
    };
    if (c.negative) {
      EXPECT_GT(amax(full.m), amax(want.m)) << "the largest is pooled away";
    }
    for (int threads : {1, 2, 3}) {
      ThreadPool tp(threads);
      const int64_t acc_elems = q->max_pooled_acc_elems(c.in, pool);
      ASSERT_GT(acc_elems, 0);
      std::vector<int32_t> acc(static_cast<size_t>(acc_elems * threads));
      std::vector<int16_t> stage(static_cast<size_t>(q->max_pooled_stage_elems(c.in, pool)));
      QExecContext ctx{acc.data(), work.data(), nullptr, stage.data(), ranges.data()};
      ctx.pool = &tp;
      ctx.acc_stride = acc_elems;
      ctx.work_stride = q->work_bytes(c.in);
      QBuffer got(pooled, 99);
      q->forward_max_pooled(x.q, pool, got.q, ctx);
      EXPECT_EQ(got.m, want.m) << threads << " threads";
      EXPECT_EQ(got.q.exp, full.q.exp) << threads << " threads";
    }
  }
}

TEST(QLayer, GlobalMaxPoolIsExact) {
  check_layer(LayerSpec::global_max_pool(), Shape{3, 5, 1, 9});
}

// Integer dropout drops what the f32 layer drops (same key, same words) and, in evaluation,
// nothing; the kept mantissas are not rescaled.
TEST(QLayer, DropoutUsesTheF32MaskWithoutRescaling) {
  const Shape in{4, 50};
  const LayerSpec spec = LayerSpec::dropout(0.3);
  std::unique_ptr<Layer> f32 = make_layer(spec, in);
  std::unique_ptr<QLayer> q = make_qlayer(spec, in);
  QBuffer x(in, -6), y(in, 0);
  Rng rng(12, 1);
  fill(x, rng);
  for (int8_t& m : x.m) m = m == 0 ? 1 : m;  // no zeros, so a zero output means dropped
  QExecContext ctx;
  ctx.key = 99;
  q->forward(x.q, y.q, ctx);
  std::vector<float> xf = x.values();
  Tensor xt(xf.data(), in), yt = Tensor::zeros(in);
  ExecContext fctx;
  fctx.key = 99;
  f32->forward(xt, yt, fctx);
  int64_t dropped = 0;
  for (int64_t i = 0; i < in.numel(); ++i) {
    EXPECT_EQ(y.m[i] == 0, yt[i] == 0.0f) << i;
    if (y.m[i] != 0) {
      EXPECT_EQ(y.m[i], x.m[i]) << i;
    }
    dropped += y.m[i] == 0;
  }
  EXPECT_GT(dropped, 0);
  EXPECT_EQ(y.q.exp, x.q.exp);
  ctx.training = false;
  q->forward(x.q, y.q, ctx);
  EXPECT_EQ(y.m, x.m);
}

TEST(QLayer, AvgPoolHasNoIntegerPath) {
  EXPECT_THROW(make_qlayer(LayerSpec::avg_pool(2), Shape{1, 1, 4, 4}), std::exception);
}

// The MobileNetV2 layers have no integer path yet: a clear input error, not a wrong layer.
TEST(QLayer, MobileNetLayersHaveNoIntegerPath) {
  auto message = [](const LayerSpec& spec, const Shape& in) {
    try {
      make_qlayer(spec, in);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message(LayerSpec::relu6(), Shape{1, 2, 4, 4}),
            "layer relu6 has no integer (int8) path; use --precision f32");
  EXPECT_EQ(message(LayerSpec::global_avg_pool(), Shape{1, 2, 4, 4}),
            "layer global_avg_pool has no integer (int8) path; use --precision f32");
  EXPECT_EQ(message(LayerSpec::conv2d(4, 3, 1, 1, 4), Shape{1, 4, 4, 4}),
            "layer conv2d with groups 4 has no integer (int8) path; use --precision f32");
  EXPECT_EQ(message(LayerSpec::residual({LayerSpec::relu()}, {}, false), Shape{1, 2, 4, 4}),
            "layer residual has no integer (int8) path yet (an NPU-style int8 path for residual "
            "networks is future work); use --precision f32");
}

}  // namespace
}  // namespace zotrain
