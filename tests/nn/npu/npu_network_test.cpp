#include "nn/npu/npu_network.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "test_util.h"
#include "zotrain/core/arena.h"
#include "zotrain/core/error.h"
#include "zotrain/core/rng.h"
#include "zotrain/models/model.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain {
namespace {

// An allocated f32 network with random batch-norm parameters and statistics (a fresh one has
// the identity norm, which would hide folding mistakes).
struct Net {
  Arena arena;
  std::unique_ptr<Network> net;
  Net(const Shape& item, const std::vector<LayerSpec>& layers, int64_t batch, uint64_t seed) {
    net = std::make_unique<Network>(item, layers);
    net->allocate(arena, batch, net->num_layers(), nullptr, seed);
    Rng rng(seed, 9);
    for (ParamRef& p : net->params()) {
      if (p.value.shape().rank != 1) continue;  // batch norm's gamma and beta, biases
      const bool gamma = p.name.find("weight") != std::string::npos;
      for (int64_t i = 0; i < p.value.numel(); ++i)
        p.value[i] = gamma ? rng.uniform(0.5f, 1.5f) : rng.uniform(-0.2f, 0.2f);
    }
    for (ParamRef& s : net->state()) {
      const bool mean = s.name.find("running_mean") != std::string::npos;
      for (int64_t i = 0; i < s.value.numel(); ++i)
        s.value[i] = mean ? rng.uniform(-0.2f, 0.2f) : rng.uniform(0.5f, 1.5f);
    }
  }
};

Net model(const std::string& name, int64_t batch, uint64_t seed = 1) {
  const ModelSpec m = model_by_name(name, Shape{1, 28, 28}, 10);
  return Net(m.item_shape, m.layers, batch, seed);
}

std::vector<float> random_input(int64_t n, uint64_t seed) {
  Rng rng(seed, 4);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = rng.uniform(-1.0f, 1.0f);
  return x;
}

// Moves the running statistics towards those of random inputs (training passes that update
// them), so that every channel stays normalized and the logits depend on the input (with
// arbitrary statistics a deep network's logits hardly differ from row to row).
void settle_statistics(Network& net, int64_t rows, int passes) {
  for (int i = 0; i < passes; ++i) {
    net.set_mode({true, static_cast<uint64_t>(i), true});
    const auto x = random_input(rows * net.item_shape().numel(), 1000 + i);
    std::copy(x.begin(), x.end(), net.input(rows).data());
    net.forward(rows);
  }
  net.set_mode({false, 0, false});
}

// Calibrates on `batches` observed passes of random rows.
void calibrate(NpuNetwork& npu, int64_t item, int64_t rows, int batches, uint64_t seed) {
  for (int b = 0; b < batches; ++b) {
    const auto x = random_input(rows * item, seed + b);
    npu.float_forward(x.data(), rows, true);
  }
  npu.calibrate();
}

TEST(NpuNetwork, FloatForwardMatchesEvalNetwork) {
  for (const char* name : {"lenet5", "resnet18:0.125", "mobilenetv2:0.35"}) {
    const int64_t rows = 3;
    Net n = model(name, rows);
    Network& net = *n.net;
    net.set_mode({false, 0, false});
    const auto x = random_input(rows * 28 * 28, 11);
    std::copy(x.begin(), x.end(), net.input(rows).data());
    const Tensor expected = net.forward(rows);
    std::vector<double> want(expected.data(), expected.data() + expected.numel());
    NpuNetwork npu(net, rows);
    npu.allocate(n.arena);
    const Tensor got = npu.float_forward(x.data(), rows, false);
    ASSERT_EQ(got.shape(), expected.shape()) << name;
    EXPECT_TRUE(test::all_close(name, got.data(), want, 1e-4));
  }
}

// Every op the program has: convolution and linear with batch norm, fused ReLU, a standalone
// ReLU6, average and max pooling, global max pooling, dropout, residuals with a convolution
// shortcut (grouped and depthwise convolutions inside) and with the identity.
std::vector<LayerSpec> every_op() {
  using L = LayerSpec;
  return {L::conv2d(4, 3, 1, 1, 1, true),
          L::batch_norm(),
          L::avg_pool(2),
          L::relu6(),
          L::residual({L::conv2d(6, 3, 2, 1, 2, false), L::batch_norm(), L::relu(),
                       L::conv2d(6, 3, 1, 1, 6, false), L::batch_norm()},
                      {L::conv2d(6, 1, 2, 0, 1, false), L::batch_norm()}, true),
          L::max_pool(2),
          L::residual({L::conv2d(6, 1, 1, 0, 1, true)}, {}, false),
          L::global_max_pool(),
          L::dropout(0.5),
          L::linear(9),
          L::batch_norm(),
          L::relu(),
          L::linear(5)};
}

TEST(NpuNetwork, FloatForwardMatchesEvalNetworkOnEveryOp) {
  const int64_t rows = 4;
  Net n(Shape{2, 12, 12}, every_op(), rows, 5);
  Network& net = *n.net;
  net.set_mode({false, 0, false});
  const auto x = random_input(rows * 2 * 12 * 12, 3);
  std::copy(x.begin(), x.end(), net.input(rows).data());
  const Tensor expected = net.forward(rows);
  NpuNetwork npu(net, rows);
  npu.allocate(n.arena);
  const Tensor got = npu.float_forward(x.data(), rows, false);
  EXPECT_TRUE(test::all_close("every op", got.data(),
                              std::vector<double>(expected.data(), expected.data() + 20), 1e-4));
  ASSERT_EQ(npu.params().size(), 7u);
  const int layers[] = {0, 4, 4, 4, 6, 9, 12};
  for (size_t i = 0; i < npu.params().size(); ++i) {
    const NpuParam& p = npu.params()[i];
    EXPECT_EQ(p.layer, layers[i]) << i;
    EXPECT_NE(net.params()[p.param_index].name.find("weight"), std::string::npos);
    EXPECT_EQ(net.params()[p.param_index].layer, p.layer);
  }
}

// After calibration on random batches, the int8 logits of fresh random rows against the float
// reference: relative L2 error of the logits and argmax agreement (printed; the bounds leave a
// margin over what was measured).
TEST(NpuNetwork, Int8ForwardAgreesWithFloatReference) {
  struct Case {
    const char* name;
    double max_rel_error, max_rel_spread, min_centred_agreement;
  };
  // Measured: lenet5 0.0067 (0.114 of the spread), centred agreement 30/32; resnet18:0.125
  // 0.046 (0.196), 29/32; mobilenetv2:0.35 0.027 (0.493), 21/32 (its ~50 int8 layers; the
  // folded depthwise weights' channel ranges differ by under 2x, so not per-tensor weight scales).
  for (const Case& c : {Case{"lenet5", 0.03, 0.25, 0.75}, Case{"resnet18:0.125", 0.1, 0.35, 0.7},
                        Case{"mobilenetv2:0.35", 0.08, 0.75, 0.5}}) {
    const int64_t rows = 32, item = 28 * 28;
    Net n = model(c.name, rows);
    settle_statistics(*n.net, rows, 30);
    NpuNetwork npu(*n.net, rows);
    npu.allocate(n.arena);
    calibrate(npu, item, rows, 4, 100);
    const auto x = random_input(rows * item, 7);
    const Tensor f = npu.float_forward(x.data(), rows, false);
    npu.set_input(x.data(), rows);
    const Tensor q = npu.forward(rows, 0, nullptr);
    // Random weights favour one class for every input, so agreement is also counted on the
    // centred logits (minus their mean over the rows: the class this input raises most), and the
    // error measured against their spread.
    std::vector<double> mean(10, 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 10; ++k) mean[k] += f[r * 10 + k] / static_cast<double>(rows);
    double err = 0, norm = 0, spread = 0;
    int agree = 0, agree_centred = 0;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t fa = 0, qa = 0, fc = 0, qc = 0;
      for (int64_t k = 0; k < 10; ++k) {
        const double fv = f[r * 10 + k], qv = q[r * 10 + k];
        err += (qv - fv) * (qv - fv);
        norm += fv * fv;
        spread += (fv - mean[k]) * (fv - mean[k]);
        if (fv > f[r * 10 + fa]) fa = k;
        if (qv > q[r * 10 + qa]) qa = k;
        if (fv - mean[k] > f[r * 10 + fc] - mean[fc]) fc = k;
        if (qv - mean[k] > q[r * 10 + qc] - mean[qc]) qc = k;
      }
      agree += fa == qa;
      agree_centred += fc == qc;
    }
    const double rel = std::sqrt(err / norm), rel_spread = std::sqrt(err / spread);
    std::printf(
        "[ npu ] %s: int8 vs float logits relative L2 error %.4f (%.3f of their spread over "
        "rows), argmax agreement %d/%d, centred argmax agreement %d/%d\n",
        c.name, rel, rel_spread, agree, static_cast<int>(rows), agree_centred,
        static_cast<int>(rows));
    EXPECT_LT(rel, c.max_rel_error) << c.name;
    EXPECT_LT(rel_spread, c.max_rel_spread) << c.name;
    EXPECT_GE(agree, rows * 0.9) << c.name;
    EXPECT_GE(agree_centred, rows * c.min_centred_agreement) << c.name;
  }
}

// z as the host replays it.
std::vector<int8_t> expected_perturbed(const NpuNetwork& npu, size_t i,
                                       const NpuNetwork::Perturb& p) {
  const std::span<const int8_t> q = npu.quantized(i);
  std::vector<int8_t> w(q.size());
  for (size_t j = 0; j < q.size(); ++j) {
    const float z = zo::perturbation({zo::Distribution::kRademacher, p.p_zero}, p.seed,
                                     static_cast<uint32_t>(npu.params()[i].param_index), j);
    w[j] = static_cast<int8_t>(std::clamp(q[j] + p.sign * static_cast<int>(z), -127, 127));
  }
  return w;
}

// The perturbed pass runs the weights clamp(q + sign * z): writing those as master weights and
// running unperturbed gives the same logits, bit for bit.
TEST(NpuNetwork, PerturbationIsPlusMinusOneInIntegerSpace) {
  const int64_t rows = 5;
  Net n(Shape{2, 12, 12}, every_op(), rows, 8);
  const auto x = random_input(rows * 2 * 12 * 12, 2);
  for (int first : {0, 4, 9}) {
    for (int sign : {1, -1}) {
      NpuNetwork npu(*n.net, rows);
      npu.allocate(n.arena);
      calibrate(npu, 2 * 12 * 12, rows, 2, 50);
      npu.set_input(x.data(), rows);
      const NpuNetwork::Perturb p{12345, sign, 0.25f, first};
      const Tensor perturbed = npu.forward(rows, 0, &p).clone();
      int64_t zeros = 0, total = 0;
      for (size_t i = 0; i < npu.params().size(); ++i) {
        NpuParam& param = npu.params()[i];
        if (param.layer < first) continue;
        const std::vector<int8_t> want = expected_perturbed(npu, i, p);
        for (size_t j = 0; j < want.size(); ++j) {
          zeros += want[j] == npu.quantized(i)[j];
          param.master[j] = want[j] * param.scale;
        }
        total += static_cast<int64_t>(want.size());
        npu.requantize(param);
        ASSERT_TRUE(std::ranges::equal(npu.quantized(i), want)) << "param " << i;
      }
      // p_zero plus the clamped ±127 weights leave about a quarter unchanged.
      EXPECT_NEAR(static_cast<double>(zeros) / total, 0.25, 0.02 + 1.5 / std::sqrt(total)) << first;
      const Tensor plain = npu.forward(rows, 0, nullptr);
      EXPECT_TRUE(test::bitwise_equal(plain, perturbed)) << "first layer " << first;
    }
  }
}

TEST(NpuNetwork, ForwardFromKeptPrefixEqualsFullForward) {
  for (const char* name : {"every_op", "mobilenetv2:0.35"}) {
    const bool small = std::string(name) == "every_op";
    const int64_t rows = 3, item = small ? 2 * 12 * 12 : 28 * 28;
    Net n = small ? Net(Shape{2, 12, 12}, every_op(), rows, 4) : model(name, rows);
    NpuNetwork npu(*n.net, rows);
    npu.allocate(n.arena);
    calibrate(npu, item, rows, 2, 60);
    const auto x = random_input(rows * item, 61);
    npu.set_input(x.data(), rows);
    const Tensor clean = npu.forward(rows, 0, nullptr).clone();
    const int layers = npu.num_layers();
    for (int k = 0; k <= layers; k += small ? 1 : 5) {
      EXPECT_TRUE(test::bitwise_equal(npu.forward(rows, k, nullptr), clean)) << name << " " << k;
      const NpuNetwork::Perturb p{77, -1, 0.0f, k};
      const Tensor full = npu.forward(rows, 0, &p).clone();
      npu.forward_prefix(rows, k);
      EXPECT_TRUE(test::bitwise_equal(npu.forward(rows, k, &p), full)) << name << " " << k;
      npu.forward_prefix(rows, layers);  // the outputs kept for the next k are unperturbed
    }
  }
}

// A program that keeps only the output before one layer places its other int8 tensors by their
// lifetimes in less memory, and computes the same logits, from the input and from that layer.
// The program that keeps every output runs no convolution with its max pooling fused; the others
// do where their convolutions' outputs are not kept (LeNet-5's two), so the logits also
// compare the two ways of pooling.
TEST(NpuNetwork, KeepingOneStartPlansLessMemoryForTheSameLogits) {
  for (const char* name : {"every_op", "lenet5", "mobilenetv2:0.35", "resnet18:0.25"}) {
    const bool small = std::string(name) == "every_op";
    const int64_t rows = 3, item = small ? 2 * 12 * 12 : 28 * 28;
    Net n = small ? Net(Shape{2, 12, 12}, every_op(), rows, 4) : model(name, rows);
    NpuNetwork all(*n.net, rows);
    all.allocate(n.arena);
    calibrate(all, item, rows, 2, 70);
    const int start = all.num_layers() / 2;
    for (int keep : {0, start}) {
      NpuNetwork one(*n.net, rows, nullptr, keep);
      EXPECT_LT(one.bytes(), all.bytes()) << name << " keep " << keep;
      one.allocate(n.arena);
      one.set_scales(all.scales());
      const auto x = random_input(rows * item, 71);
      all.set_input(x.data(), rows);
      one.set_input(x.data(), rows);
      const NpuNetwork::Perturb p{5, 1, 0.0f, keep};
      const Tensor want = all.forward(rows, 0, &p).clone();
      EXPECT_TRUE(test::bitwise_equal(one.forward(rows, 0, &p), want)) << name << " " << keep;
      one.forward_prefix(rows, keep);
      EXPECT_TRUE(test::bitwise_equal(one.forward(rows, keep, &p), want)) << name << " " << keep;
      if (keep > 1) {
        EXPECT_THROW(one.forward(rows, keep - 1, &p), RuntimeError);
      }
    }
  }
}

// The int8 passes split their rows over a thread pool: the same logits, clean and perturbed, for
// any thread count (residual adds, depthwise and pointwise layers, pooling).
TEST(NpuNetwork, ResultsDoNotDependOnThreadCount) {
  for (const char* name : {"every_op", "mobilenetv2:0.35", "resnet18:0.25"}) {
    const bool small = std::string(name) == "every_op";
    const int64_t rows = 5, item = small ? 2 * 12 * 12 : 28 * 28;
    Net n = small ? Net(Shape{2, 12, 12}, every_op(), rows, 4) : model(name, rows);
    const auto x = random_input(rows * item, 62);
    const NpuNetwork::Perturb p{78, -1, 0.0f, 0};
    std::vector<Tensor> logits;
    for (int threads : {1, 3}) {
      ThreadPool pool(threads);
      NpuNetwork npu(*n.net, rows, &pool);
      npu.allocate(n.arena);
      calibrate(npu, item, rows, 2, 60);
      npu.set_input(x.data(), rows);
      logits.push_back(npu.forward(rows, 0, nullptr).clone());
      logits.push_back(npu.forward(rows, 0, &p).clone());
    }
    EXPECT_TRUE(test::bitwise_equal(logits[0], logits[2])) << name;
    EXPECT_TRUE(test::bitwise_equal(logits[1], logits[3])) << name;
  }
}

TEST(NpuNetwork, RequantizeTakesTheChangedMasterWeight) {
  const int64_t rows = 4;
  Net n = model("lenet5", rows);
  NpuNetwork npu(*n.net, rows);
  npu.allocate(n.arena);
  calibrate(npu, 28 * 28, rows, 2, 10);
  const auto x = random_input(rows * 28 * 28, 12);
  npu.set_input(x.data(), rows);
  const Tensor before = npu.forward(rows, 0, nullptr).clone();
  NpuParam& p = npu.params()[3];  // the second linear layer (layer 9)
  EXPECT_EQ(p.layer, 9);
  const float scale = p.scale;
  const std::vector<int8_t> q(npu.quantized(3).begin(), npu.quantized(3).end());
  for (int64_t j = 0; j < p.master.numel(); ++j) p.master[j] += 3.0f * scale;
  npu.requantize(p);
  EXPECT_EQ(p.scale, scale);  // fixed until recalibration
  for (size_t j = 0; j < q.size(); ++j)
    ASSERT_EQ(npu.quantized(3)[j], std::min(q[j] + 3, 127)) << j;
  // Layer 9's kept output is stale now: a pass must start at or before it.
  EXPECT_THROW(npu.forward(rows, 10, nullptr), RuntimeError);
  const Tensor after = npu.forward(rows, 9, nullptr);
  EXPECT_FALSE(test::bitwise_equal(after, before));
  // Recalibration re-derives the weight scale from the new masters.
  npu.reset_observations();
  EXPECT_THROW(npu.calibrate(), RuntimeError);
  calibrate(npu, 28 * 28, rows, 1, 10);
  EXPECT_NE(npu.params()[3].scale, scale);
  EXPECT_GT(npu.bytes(), 0u);
}

TEST(NpuNetwork, SetScalesGivesTheCalibratedProgramWithoutObserving) {
  const int64_t rows = 4;
  for (const char* name : {"lenet5", "mobilenetv2:0.35"}) {
    Net n = model(name, rows);
    settle_statistics(*n.net, rows, 2);
    NpuNetwork calibrated(*n.net, rows);
    calibrated.allocate(n.arena);
    calibrate(calibrated, 28 * 28, rows, 2, 20);
    NpuNetwork restored(*n.net, rows);
    restored.allocate(n.arena);
    EXPECT_FALSE(restored.calibrated());
    restored.set_scales(calibrated.scales());
    EXPECT_TRUE(restored.calibrated());
    EXPECT_EQ(restored.scales(), calibrated.scales());
    const auto x = random_input(rows * 28 * 28, 21);
    calibrated.set_input(x.data(), rows);
    restored.set_input(x.data(), rows);
    const Tensor a = calibrated.forward(rows, 0, nullptr).clone();
    EXPECT_TRUE(test::bitwise_equal(restored.forward(rows, 0, nullptr), a)) << name;
    for (size_t i = 0; i < calibrated.params().size(); ++i)
      EXPECT_TRUE(std::ranges::equal(restored.quantized(i), calibrated.quantized(i)))
          << name << " param " << i;
  }
}

TEST(NpuNetwork, InputAndLogitsUseTheCalibratedScales) {
  const int64_t rows = 2;
  Net n = model("lenet5", rows);
  NpuNetwork npu(*n.net, rows);
  npu.allocate(n.arena);
  EXPECT_FALSE(npu.calibrated());
  calibrate(npu, 28 * 28, rows, 1, 20);
  ASSERT_TRUE(npu.calibrated());
  // Calibration saw inputs in [-1, 1): the largest magnitude maps to 127.
  EXPECT_NEAR(npu.input_scale(), 1.0 / 127, 1e-4);
  const auto x = random_input(rows * 28 * 28, 21);
  npu.set_input(x.data(), rows);
  const Tensor logits = npu.forward(rows, 0, nullptr);
  for (int64_t i = 0; i < logits.numel(); ++i) {
    const float q = logits[i] / npu.output_scale();
    EXPECT_NEAR(q, std::round(q), 1e-3);
    EXPECT_LE(std::fabs(q), 127.0f);
  }
}

TEST(NpuNetwork, RejectsWhatItCannotRun) {
  using L = LayerSpec;
  auto message = [](const std::vector<LayerSpec>& layers) -> std::string {
    Net n(Shape{1, 8, 8}, layers, 2, 1);
    try {
      NpuNetwork npu(*n.net, 2);
      npu.allocate(n.arena);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message({L::conv2d(2, 3), L::relu(), L::batch_norm(), L::flatten(), L::linear(3)})
                .find("layer 2 (batch_norm)"),
            std::string::npos);
  EXPECT_NE(message({L::batch_norm(), L::flatten(), L::linear(3)}).find("layer 0"),
            std::string::npos);
  EXPECT_NE(message({L::residual({L::conv2d(1, 3, 1, 1), L::relu(), L::batch_norm()}, {}, true),
                     L::flatten(), L::linear(3)})
                .find("layer 0.main.2"),
            std::string::npos);

  // Misuse of the API is a bug of the caller (ZT_ASSERT), not bad input.
  Network unallocated(Shape{1, 8, 8}, {L::flatten(), L::linear(3)});
  EXPECT_THROW(NpuNetwork(unallocated, 2), RuntimeError);
  Net n(Shape{1, 8, 8}, {L::flatten(), L::linear(3)}, 2, 1);
  EXPECT_THROW(NpuNetwork(*n.net, 0), RuntimeError);
  NpuNetwork npu(*n.net, 2);
  npu.allocate(n.arena);
  const auto x = random_input(3 * 64, 1);
  EXPECT_THROW(npu.calibrate(), RuntimeError);
  EXPECT_THROW(npu.set_input(x.data(), 2), RuntimeError);
  EXPECT_THROW(npu.forward(2, 0, nullptr), RuntimeError);
  NpuNetwork other(*n.net, 2);
  other.allocate(n.arena);
  EXPECT_THROW(npu.requantize(other.params()[0]), RuntimeError);
  npu.float_forward(x.data(), 3, true);  // calibration batches may be larger than the program's
  npu.calibrate();
  EXPECT_THROW(npu.set_input(x.data(), 3), RuntimeError);
  EXPECT_THROW(npu.forward(1, 0, nullptr), RuntimeError);  // no input yet
  npu.set_input(x.data(), 2);
  EXPECT_THROW(npu.forward(2, 1, nullptr), RuntimeError);  // nothing kept yet
  EXPECT_THROW(npu.forward(2, 3, nullptr), RuntimeError);
  const NpuNetwork::Perturb zero_sign{1, 0, 0.0f, 0};
  EXPECT_THROW(npu.forward(2, 0, &zero_sign), RuntimeError);
  EXPECT_NO_THROW(npu.forward(2, 0, nullptr));
}

}  // namespace
}  // namespace zotrain
