// Micro-benchmarks of the f32 and int8 kernels at LeNet-5's shapes (28x28 inputs, batch 256) and
// the convolutions of ResNet18 and MobileNetV2 (kConvCases), on one thread; with oneDNN, its own
// convolution primitive on the same shapes as the peer. Compute-bound kernels report FLOPS or OPS
// (2 per multiply-add), pooling reports input elements per second. GEMM, the convolutions and
// pooling run once per instruction set the CPU supports; gemm_f32_ref and gemm_s8_ref give the
// baselines.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#if defined(ZOTRAIN_HAVE_ONEDNN)
#include <omp.h>

#include <dnnl.hpp>
#endif

#include "kernels/gemm.h"
#include "kernels/int8.h"
#include "kernels/isa.h"
#include "kernels/npu.h"
#include "kernels/philox_run.h"
#include "nn/conv2d.h"
#include "nn/max_pool2d.h"
#include "zotrain/core/arena.h"
#include "zotrain/core/rng.h"
#include "zotrain/models/model.h"
#include "zotrain/nn/int8/qnetwork.h"
#include "zotrain/nn/network.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain {
namespace {

using kernels::KernelIsa;

constexpr int64_t kBatch = 256;

Tensor random_tensor(const Shape& shape, uint64_t stream) {
  Tensor t = Tensor::zeros(shape);
  Rng rng(7, stream);
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = rng.uniform(-1.0f, 1.0f);
  return t;
}

void set_rate(benchmark::State& state, double per_iteration, const char* name) {
  state.counters[name] = benchmark::Counter(per_iteration * static_cast<double>(state.iterations()),
                                            benchmark::Counter::kIsRate);
}

bool select_isa(benchmark::State& state, int64_t isa) {
  if (!kernels::kernel_isa_supported(static_cast<KernelIsa>(isa))) {
    state.SkipWithError("instruction set not supported");
    return false;
  }
  kernels::set_active_kernel_isa(static_cast<KernelIsa>(isa));
  state.SetLabel(kernels::kernel_isa_name(static_cast<KernelIsa>(isa)));
  return true;
}

// The arguments of the GEMM benchmarks: trans_a, trans_b, m, n, k, and -1 for the reference or a
// KernelIsa for the fast kernel.
struct GemmArgs {
  explicit GemmArgs(const benchmark::State& s)
      : ta(s.range(0)),
        tb(s.range(1)),
        m(s.range(2)),
        n(s.range(3)),
        k(s.range(4)),
        isa(s.range(5)) {}
  int64_t lda() const { return ta ? m : k; }
  int64_t ldb() const { return tb ? k : n; }
  bool ta, tb;
  int64_t m, n, k, isa;
};

// Times product(), 2 m n k operations per call counted as `unit`.
template <typename Product>
void time_gemm(benchmark::State& state, const GemmArgs& g, const char* unit, Product product) {
  for (auto _ : state) {
    product();
    benchmark::ClobberMemory();
  }
  set_rate(state, 2.0 * g.m * g.n * g.k, unit);
}

void BM_Gemm(benchmark::State& state) {
  const GemmArgs g(state);
  if (g.isa >= 0 && !select_isa(state, g.isa)) return;
  auto run = g.isa < 0 ? kernels::gemm_f32_ref : kernels::gemm_f32;
  Tensor a = random_tensor(Shape{g.m * g.k}, 0), b = random_tensor(Shape{g.k * g.n}, 1);
  Tensor c = random_tensor(Shape{g.m * g.n}, 2);
  time_gemm(state, g, "FLOPS", [&] {
    run(g.ta, g.tb, g.m, g.n, g.k, 1.0f, a.data(), g.lda(), b.data(), g.ldb(), 0.0f, c.data(), g.n);
  });
  state.SetLabel(g.isa < 0 ? "reference" : kernels::gemm_f32_kernel_name());
}

// The int8 products take a last argument too: whether A (the activations) is nonnegative, as the
// ReLU outputs that reach every layer but the first are.
void gemm_shapes_of(benchmark::internal::Benchmark* b, bool s8) {
  if (s8)
    b->ArgNames({"ta", "tb", "m", "n", "k", "isa", "a_nonneg"});
  else
    b->ArgNames({"ta", "tb", "m", "n", "k", "isa"});
  const std::vector<std::vector<int64_t>> shapes = {
      {0, 1, kBatch, 120, 400},  // fc1 forward: x W^T
      {0, 1, kBatch, 84, 120},   // fc2 forward
      {0, 1, kBatch, 10, 84},    // fc3 forward
      {1, 0, 120, 400, kBatch},  // fc1 weight gradient: dy^T x
      {0, 0, kBatch, 400, 120},  // fc1 input gradient: dy W
      {0, 0, 256, 256, 256},     // square
  };
  const auto vnni = static_cast<int64_t>(KernelIsa::kAvx2FmaVnni);
  const auto avx_vnni = static_cast<int64_t>(KernelIsa::kAvx2FmaAvxVnni);
  for (const auto& s : shapes)
    for (int64_t isa : {int64_t{-1}, int64_t{0}, int64_t{1}, vnni, avx_vnni})
      for (int64_t nonneg : {0, 1}) {
        if ((nonneg || isa == vnni || isa == avx_vnni) && !s8) continue;
        auto args = s;
        args.push_back(isa);
        if (s8) args.push_back(nonneg);
        b->Args(args);
      }
}

void gemm_shapes(benchmark::internal::Benchmark* b) {
  gemm_shapes_of(b, false);
}

void gemm_s8_shapes(benchmark::internal::Benchmark* b) {
  gemm_shapes_of(b, true);
}
BENCHMARK(BM_Gemm)->Apply(gemm_shapes);

// A layer with random parameters and gradient buffers, and its workspace for one thread.
struct BoundLayer {
  BoundLayer(Layer& layer, const Shape& in) : x(random_tensor(in, 3)) {
    uint64_t stream = 4;
    for (const ParamSpec& p : layer.param_specs()) {
      params.push_back(random_tensor(p.shape, stream++));
      grads.push_back(Tensor::zeros(p.shape));
    }
    layer.bind(params, grads);
    y = Tensor::zeros(layer.output_shape(in));
    dy = random_tensor(y.shape(), 5);
    dx = Tensor::zeros(in);
    workspace.resize(layer.workspace_floats(in, 1) + 1);
    ctx.workspace = workspace.data();
  }
  Tensor x, y, dx, dy;
  std::vector<Tensor> params, grads;
  std::vector<float> workspace;
  ExecContext ctx;
};

// Convolutions of the models: batch, in channels, size, out channels, kernel, stride, pad.
struct ConvCase {
  int64_t batch, in_c, hw, out_c, k, stride, pad;
};
constexpr ConvCase kConvCases[] = {
    {kBatch, 1, 28, 6, 5, 1, 2},   // 0: LeNet-5 conv1
    {kBatch, 6, 14, 16, 5, 1, 0},  // 1: LeNet-5 conv2
    {32, 16, 28, 16, 3, 1, 1},     // 2: resnet18:0.25 on 28x28, first stage
    {32, 64, 7, 64, 3, 1, 1},      // 3: resnet18:0.25, last stage
    {8, 64, 56, 64, 3, 1, 1},      // 4: resnet18 at ImageNet's first stage
    {32, 32, 14, 192, 1, 1, 0},    // 5: mobilenetv2:1.0 expansion 1x1
    {32, 192, 14, 32, 1, 1, 0},    // 6: mobilenetv2:1.0 projection 1x1
    {32, 96, 7, 576, 1, 1, 0},     // 7: mobilenetv2:1.0 late expansion 1x1
};
constexpr int64_t kConvCaseCount = sizeof kConvCases / sizeof kConvCases[0];

Conv2d conv_case(int64_t which, Shape& in) {
  const ConvCase& c = kConvCases[which];
  in = Shape{c.batch, c.in_c, c.hw, c.hw};
  return Conv2d(c.in_c, c.out_c, c.k, c.stride, c.pad);
}

// Arguments: conv (kConvCases), KernelIsa.
void BM_Conv2dForward(benchmark::State& state) {
  Shape in;
  Conv2d layer = conv_case(state.range(0), in);
  if (!select_isa(state, state.range(1))) return;
  BoundLayer l(layer, in);
  for (auto _ : state) {
    layer.forward(l.x, l.y, l.ctx);
    benchmark::ClobberMemory();
  }
  set_rate(state, 2.0 * static_cast<double>(layer.forward_macs(in)), "FLOPS");
}
// The sets: portable, avx2+fma (its own tiles), avx2+fma+onednn (oneDNN's sgemm for the 1x1
// cases) and avx2+fma+vnni (the avx2+fma tiles at 16 lanes, on 512 bits).
BENCHMARK(BM_Conv2dForward)
    ->ArgNames({"conv", "isa"})
    ->ArgsProduct({benchmark::CreateDenseRange(0, kConvCaseCount - 1, 1),
                   {0, 1, 2, static_cast<int64_t>(KernelIsa::kAvx2FmaVnni)}});

#if defined(ZOTRAIN_HAVE_ONEDNN)
// The peer: oneDNN's own convolution primitive on the same shapes, one thread, on zotrain's NCHW
// layout (arg 0) and on the blocked layouts oneDNN picks for itself (arg 1, inputs reordered
// once outside the loop: what a network kept in oneDNN's layouts end to end would pay).
void BM_OnednnConv2dForward(benchmark::State& state) {
  omp_set_num_threads(1);
  const ConvCase& c = kConvCases[state.range(0)];
  const bool blocked = state.range(1) != 0;
  using dnnl::memory;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(eng);
  const int64_t out = (c.hw + 2 * c.pad - c.k) / c.stride + 1;
  const memory::dims src{c.batch, c.in_c, c.hw, c.hw}, wei{c.out_c, c.in_c, c.k, c.k},
      bias{c.out_c}, dst{c.batch, c.out_c, out, out};
  const auto f32 = memory::data_type::f32;
  const auto any = memory::format_tag::any;
  const memory::desc src_nchw(src, f32, memory::format_tag::nchw),
      wei_oihw(wei, f32, memory::format_tag::oihw), bias_x(bias, f32, memory::format_tag::x),
      dst_nchw(dst, f32, memory::format_tag::nchw);
  const dnnl::convolution_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference,
       dnnl::algorithm::convolution_direct,
       blocked ? memory::desc(src, f32, any) : src_nchw,
       blocked ? memory::desc(wei, f32, any) : wei_oihw,
       bias_x,
       blocked ? memory::desc(dst, f32, any) : dst_nchw,
       {c.stride, c.stride},
       {c.pad, c.pad},
       {c.pad, c.pad}},
      eng);
  Tensor x = random_tensor(Shape{c.batch, c.in_c, c.hw, c.hw}, 3);
  Tensor w = random_tensor(Shape{c.out_c, c.in_c, c.k, c.k}, 4),
         b = random_tensor(Shape{c.out_c}, 5);
  memory x_user(src_nchw, eng, x.data()), w_user(wei_oihw, eng, w.data()),
      b_mem(bias_x, eng, b.data());
  memory x_mem(pd.src_desc(), eng), w_mem(pd.weights_desc(), eng), y_mem(pd.dst_desc(), eng);
  dnnl::reorder(x_user, x_mem).execute(stream, x_user, x_mem);
  dnnl::reorder(w_user, w_mem).execute(stream, w_user, w_mem);
  dnnl::convolution_forward conv(pd);
  for (auto _ : state) {
    conv.execute(stream, {{DNNL_ARG_SRC, x_mem},
                          {DNNL_ARG_WEIGHTS, w_mem},
                          {DNNL_ARG_BIAS, b_mem},
                          {DNNL_ARG_DST, y_mem}});
    stream.wait();
  }
  state.SetLabel(std::string("oneDNN ") + pd.impl_info_str());
  set_rate(state, 2.0 * c.batch * c.out_c * out * out * c.in_c * c.k * c.k, "FLOPS");
}
BENCHMARK(BM_OnednnConv2dForward)
    ->ArgNames({"conv", "blocked"})
    ->ArgsProduct({benchmark::CreateDenseRange(0, kConvCaseCount - 1, 1), {0, 1}});
#endif

// Arguments: conv, KernelIsa, and 1 to compute the input gradient besides the weight gradient
// (a network computes none for its first layer). Each gradient has as many multiply-adds as the
// forward pass.
void BM_Conv2dBackward(benchmark::State& state) {
  Shape in;
  Conv2d layer = conv_case(state.range(0), in);
  if (!select_isa(state, state.range(1))) return;
  BoundLayer l(layer, in);
  Tensor dx = state.range(2) ? l.dx : Tensor();
  for (auto _ : state) {
    layer.backward(l.x, l.y, l.dy, dx, l.ctx);
    benchmark::ClobberMemory();
  }
  set_rate(state, 2.0 * (1 + state.range(2)) * static_cast<double>(layer.forward_macs(in)),
           "FLOPS");
}
BENCHMARK(BM_Conv2dBackward)
    ->ArgNames({"conv", "isa", "dx"})
    ->ArgsProduct({{0, 1}, {0, 1}, {0, 1}});

// Arguments: channels and size of LeNet-5's pooling inputs.
// MobileNetV2's depthwise 3x3 convolutions at batch 32: 0 = 96 channels of 32x32 at stride 2
// (mobilenetv2:1.0 on 64x64, first 24-channel block), 1 = 144 channels of 16x16 at stride 1.
// Arguments: conv, KernelIsa, and 0 forward, 1 backward (dx and dw, twice the multiply-adds).
void BM_Depthwise3x3(benchmark::State& state) {
  const bool s2 = state.range(0) == 0;
  const int64_t c = s2 ? 96 : 144;
  Shape in{32, c, s2 ? 32 : 16, s2 ? 32 : 16};
  Conv2d layer(c, c, 3, s2 ? 2 : 1, 1, c, false);
  if (!select_isa(state, state.range(1))) return;
  BoundLayer l(layer, in);
  for (auto _ : state) {
    if (state.range(2))
      layer.backward(l.x, l.y, l.dy, l.dx, l.ctx);
    else
      layer.forward(l.x, l.y, l.ctx);
    benchmark::ClobberMemory();
  }
  set_rate(state, 2.0 * (1 + state.range(2)) * static_cast<double>(layer.forward_macs(in)),
           "FLOPS");
}
BENCHMARK(BM_Depthwise3x3)->ArgNames({"conv", "isa", "bwd"})->ArgsProduct({{0, 1}, {0, 1}, {0, 1}});

void BM_MaxPool2dForward(benchmark::State& state) {
  const Shape in{kBatch, state.range(0), state.range(1), state.range(1)};
  MaxPool2d layer(2, 2);
  BoundLayer l(layer, in);
  for (auto _ : state) {
    layer.forward(l.x, l.y, l.ctx);
    benchmark::ClobberMemory();
  }
  set_rate(state, static_cast<double>(in.numel()), "elements");
}
BENCHMARK(BM_MaxPool2dForward)->ArgNames({"c", "hw"})->Args({6, 28})->Args({16, 10});

void BM_MaxPool2dBackward(benchmark::State& state) {
  const Shape in{kBatch, state.range(0), state.range(1), state.range(1)};
  MaxPool2d layer(2, 2);
  BoundLayer l(layer, in);
  for (auto _ : state) {
    layer.backward(l.x, l.y, l.dy, l.dx, l.ctx);
    benchmark::ClobberMemory();
  }
  set_rate(state, static_cast<double>(in.numel()), "elements");
}
BENCHMARK(BM_MaxPool2dBackward)->ArgNames({"c", "hw"})->Args({6, 28})->Args({16, 10});

// The whole LeNet-5 forward pass (all layers, as a zeroth-order step runs it), per example.
// Argument: KernelIsa.
void BM_LeNet5Forward(benchmark::State& state) {
  if (!select_isa(state, state.range(0))) return;
  ModelSpec m = lenet5(Shape{1, 28, 28}, 10);
  Network net(m.item_shape, m.layers);
  Arena arena;
  net.allocate(arena, kBatch, net.num_layers(), nullptr, 1);
  Tensor input = net.input(kBatch);
  Rng rng(7, 0);
  for (int64_t i = 0; i < input.numel(); ++i) input[i] = rng.uniform(-1.0f, 1.0f);
  for (auto _ : state) benchmark::DoNotOptimize(net.forward(kBatch).data());
  set_rate(state, 2.0 * static_cast<double>(net.forward_macs(kBatch)), "FLOPS");
  state.counters["per_example"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kBatch,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_LeNet5Forward)->ArgNames({"isa"})->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// ---- int8 (NITI) kernels ----

// Values in [-127, 127], or in [0, 127] (ReLU outputs) if nonneg.
std::vector<int8_t> random_s8(int64_t n, uint64_t stream, bool nonneg = false) {
  std::vector<int8_t> v(static_cast<size_t>(n));
  Rng rng(7, stream);
  for (int8_t& x : v)
    x = static_cast<int8_t>(nonneg ? rng.below(128) : static_cast<int>(rng.below(255)) - 127);
  return v;
}

void BM_GemmS8(benchmark::State& state) {
  const GemmArgs g(state);
  if (g.isa >= 0 && !select_isa(state, g.isa)) return;
  auto run = g.isa < 0 ? kernels::gemm_s8_ref : kernels::gemm_s8;
  std::vector<int8_t> a = random_s8(g.m * g.k, 0, state.range(6)), b = random_s8(g.k * g.n, 1);
  std::vector<int32_t> c(static_cast<size_t>(g.m * g.n));
  time_gemm(state, g, "OPS", [&] {
    run(g.ta, g.tb, g.m, g.n, g.k, a.data(), g.lda(), b.data(), g.ldb(), c.data(), g.n, false);
  });
  if (g.isa < 0) state.SetLabel("reference");
}
BENCHMARK(BM_GemmS8)->Apply(gemm_s8_shapes);

// A linear layer's int8 forward over the batch (int32 out, linear_s8_forward: B packed once, A
// nonnegative as ReLU outputs are), LeNet-5's three at batch 256. Arguments: layer, KernelIsa.
void BM_LinearS8Forward(benchmark::State& state) {
  constexpr int64_t kShapes[][2] = {{120, 400}, {84, 120}, {10, 84}};  // n, k
  const int64_t m = kBatch, n = kShapes[state.range(0)][0], k = kShapes[state.range(0)][1];
  if (!select_isa(state, state.range(1))) return;
  std::vector<int8_t> a = random_s8(m * k, 6, true), b = random_s8(n * k, 7);
  std::vector<int32_t> c(static_cast<size_t>(m * n));
  std::vector<uint64_t> work(static_cast<size_t>(kernels::linear_s8_work_bytes(n, k) / 8 + 1));
  const uint64_t key = kernels::new_weights_key();
  for (auto _ : state) {
    kernels::linear_s8_forward(m, n, k, a.data(), b.data(), c.data(), work.data(), key);
    benchmark::ClobberMemory();
  }
  set_rate(state, 2.0 * static_cast<double>(m * n * k), "OPS");
}
BENCHMARK(BM_LinearS8Forward)
    ->ArgNames({"layer", "isa"})
    ->ArgsProduct({{0, 1, 2},
                   {0, 1, static_cast<int64_t>(KernelIsa::kAvx2FmaVnni),
                    static_cast<int64_t>(KernelIsa::kAvx2FmaAvxVnni)}});

// One int8 convolution forward over the batch (int32 out), as an int8 Conv2d layer runs it.
// Arguments: conv (kConvCases: LeNet-5's two, ResNet18's 3x3), KernelIsa, whether the input is
// nonnegative (ReLU outputs).
void BM_Conv2dS8Forward(benchmark::State& state) {
  Shape in;
  const Conv2d layer = conv_case(state.range(0), in);
  if (!select_isa(state, state.range(1))) return;
  const ConvCase& c = kConvCases[state.range(0)];
  const auto g = kernels::Conv2dGeometry::make(in[1], in[2], in[3], c.out_c, c.k, c.stride, c.pad);
  std::vector<int8_t> x = random_s8(in.numel(), 3, state.range(2)),
                      w = random_s8(g.out_c * g.patch_size(), 4);
  std::vector<int32_t> y(static_cast<size_t>(c.batch * g.out_numel()));
  std::vector<uint64_t> work(static_cast<size_t>(kernels::conv2d_s8_work_bytes(g) / 8 + 1));
  for (auto _ : state) {
    kernels::conv2d_s8_forward(g, c.batch, x.data(), w.data(), y.data(), work.data());
    benchmark::ClobberMemory();
  }
  set_rate(state, 2.0 * static_cast<double>(layer.forward_macs(in)), "OPS");
}
BENCHMARK(BM_Conv2dS8Forward)
    ->ArgNames({"conv", "isa", "nonneg"})
    ->ArgsProduct({{0, 1, 2, 3},
                   {0, 1, static_cast<int64_t>(KernelIsa::kAvx2FmaVnni),
                    static_cast<int64_t>(KernelIsa::kAvx2FmaAvxVnni)},
                   {0, 1}});

// The NPU depthwise 3x3 convolution (conv_s8, requantization included) of MobileNetV2:0.35 on
// 28x28 inputs, batch 32: 0 = 48 channels of 28x28 at stride 1, 1 = the same at stride 2, 2 = 144
// channels of 7x7, 3 = 336 channels of 4x4. Arguments: case, KernelIsa.
void BM_DepthwiseS8(benchmark::State& state) {
  struct Case {
    int64_t channels, hw, stride;
  };
  constexpr Case kCases[] = {{48, 28, 1}, {48, 28, 2}, {144, 7, 1}, {336, 4, 1}};
  const Case& c = kCases[state.range(0)];
  if (!select_isa(state, state.range(1))) return;
  constexpr int64_t kImages = 32;
  const kernels::NpuConvGeometry g{c.channels, c.hw, c.hw, c.channels, 3, c.stride, 1, c.channels};
  std::vector<int8_t> x = random_s8(kImages * c.channels * c.hw * c.hw, 8, true),
                      w = random_s8(c.channels * 9, 9),
                      y(static_cast<size_t>(kImages * c.channels * g.out_h() * g.out_w()));
  const std::vector<int32_t> bias(static_cast<size_t>(c.channels), 100);
  const kernels::FixedMultiplier mult = kernels::quantize_multiplier(1.0 / 300);
  for (auto _ : state) {
    kernels::conv_s8(g, kImages, x.data(), w.data(), bias.data(), mult, 0, 127, y.data(), nullptr);
    benchmark::ClobberMemory();
  }
  set_rate(state, 2.0 * 9 * static_cast<double>(y.size()), "OPS");
}
BENCHMARK(BM_DepthwiseS8)
    ->ArgNames({"case", "isa"})
    ->ArgsProduct({{0, 1, 2, 3},
                   {0, 1, static_cast<int64_t>(KernelIsa::kAvx2FmaVnni),
                    static_cast<int64_t>(KernelIsa::kAvx2FmaAvxVnni)}});

// Arguments: channels and size of LeNet-5's pooling inputs, KernelIsa.
void BM_MaxPool2dS8Forward(benchmark::State& state) {
  const int64_t planes = kBatch * state.range(0), hw = state.range(1);
  if (!select_isa(state, state.range(2))) return;
  const auto g = kernels::Pool2dGeometry::make(hw, hw, 2, 2);
  std::vector<int8_t> x = random_s8(planes * hw * hw, 5),
                      y(static_cast<size_t>(planes * g.out_plane()));
  for (auto _ : state) {
    kernels::max_pool2d_s8_forward(g, planes, x.data(), y.data());
    benchmark::ClobberMemory();
  }
  set_rate(state, static_cast<double>(planes * hw * hw), "elements");
}
BENCHMARK(BM_MaxPool2dS8Forward)
    ->ArgNames({"c", "hw", "isa"})
    ->ArgsProduct({{6}, {28}, {0, 1}})
    ->Args({16, 10, 0})
    ->Args({16, 10, 1});

// The Philox blocks of the ternary z of LeNet-5's fc1 (48,000 weights, 2 per block).
// Argument: KernelIsa.
void BM_PhiloxRun(benchmark::State& state) {
  if (!select_isa(state, state.range(0))) return;
  constexpr int64_t kBlocks = 24000;
  std::vector<uint32_t> out(4 * kBlocks);
  for (auto _ : state) {
    kernels::philox4x32_run(0, 2, 0x5A4F, 99, kBlocks, out.data());
    benchmark::ClobberMemory();
  }
  set_rate(state, static_cast<double>(kBlocks), "blocks");
}
BENCHMARK(BM_PhiloxRun)->ArgNames({"isa"})->Arg(0)->Arg(1)->Arg(3);

// θ + εz with Gaussian z for LeNet-5's fc1 (48,000 weights), which every perturbed pass and every
// update regenerates (zo::add_perturbation: Philox words, Box-Muller, the sum). Argument:
// KernelIsa.
void BM_GaussianPerturbation(benchmark::State& state) {
  if (!select_isa(state, state.range(0))) return;
  constexpr int64_t kWeights = 48000;
  std::vector<float> theta(kWeights, 0.5f), out(kWeights);
  const zo::PerturbationSpec spec{zo::Distribution::kGaussian, 0.0f};
  for (auto _ : state) {
    zo::add_perturbation(spec, 99, 2, 1e-3f, theta.data(), out.data(), 0, kWeights);
    benchmark::ClobberMemory();
  }
  set_rate(state, static_cast<double>(kWeights), "elements");
}
BENCHMARK(BM_GaussianPerturbation)->ArgNames({"isa"})->Arg(0)->Arg(1)->Arg(3);

// The whole int8 LeNet-5 forward pass (QNetwork, requantization included), as a zeroth-order
// step runs it twice per sample, per example. Argument: KernelIsa.
void BM_LeNet5ForwardS8(benchmark::State& state) {
  if (!select_isa(state, state.range(0))) return;
  ModelSpec m = lenet5(Shape{1, 28, 28}, 10);
  Network desc(m.item_shape, m.layers);
  QNetwork net(desc);
  Arena arena;
  net.allocate(arena, kBatch, net.num_layers(), 1);
  QTensor input = net.input();
  const std::vector<int8_t> x = random_s8(input.numel(), 6);
  std::copy(x.begin(), x.end(), input.data);
  for (auto _ : state) benchmark::DoNotOptimize(net.forward(kBatch).data);
  set_rate(state, 2.0 * static_cast<double>(desc.forward_macs(kBatch)), "OPS");
  state.counters["per_example"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kBatch,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_LeNet5ForwardS8)->ArgNames({"isa"})->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace zotrain

BENCHMARK_MAIN();
