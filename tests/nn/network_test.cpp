#include "zotrain/nn/network.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <vector>

#include "nn/loss.h"
#include "test_util.h"
#include "zotrain/core/error.h"
#include "zotrain/core/rng.h"
#include "zotrain/core/thread_pool.h"
#include "zotrain/models/model.h"

namespace zotrain {
namespace {

// A small LeNet-like stack that has every layer kind.
std::vector<LayerSpec> small_cnn() {
  using L = LayerSpec;
  return {L::conv2d(3, 3, 1, 1), L::relu(),    L::max_pool(2),
          L::conv2d(4, 3, 2, 0), L::relu(),    L::avg_pool(2),
          L::flatten(),          L::linear(7), L::relu(),
          L::linear(5)};
}

void fill_input(Network& net, int64_t rows, uint64_t seed) {
  Tensor x = net.input(rows);
  Rng rng(seed, 1);
  for (int64_t i = 0; i < x.numel(); ++i) x[i] = rng.normal();
}

std::vector<uint8_t> labels_for(int64_t rows) {
  std::vector<uint8_t> l(rows);
  for (int64_t i = 0; i < rows; ++i) l[i] = static_cast<uint8_t>((i * 3) % 5);
  return l;
}

float loss_and_grads(Network& net, int64_t rows, const std::vector<uint8_t>& labels,
                     bool backward) {
  Tensor logits = net.forward(rows);
  Tensor dlogits = net.logits_grad(rows);
  float loss = softmax_cross_entropy(logits, labels.data(), backward ? &dlogits : nullptr, nullptr);
  if (backward) {
    net.zero_grad();
    net.backward(dlogits);
  }
  return loss;
}

TEST(Network, HeadStartCountsLayersWithParameters) {
  ModelSpec m = lenet5(Shape{1, 28, 28}, 10);
  Network net(m.item_shape, m.layers);
  ASSERT_EQ(net.num_layers(), 12);
  EXPECT_EQ(net.param_layers(), (std::vector<int>{0, 3, 7, 9, 11}));
  EXPECT_EQ(net.head_start(0), 12);
  EXPECT_EQ(net.head_start(1), 11);
  EXPECT_EQ(net.head_start(2), 9);
  EXPECT_EQ(net.head_start(5), 0);
  EXPECT_THROW(net.head_start(6), InputError);
  EXPECT_EQ(net.input_shape(7, 32), (Shape{32, 400}));
  EXPECT_EQ(net.num_classes(), 10);
}

TEST(Network, ArenaBytesMatchThePlanForEverySplit) {
  Network probe(Shape{1, 12, 12}, small_cnn());
  for (int bp = 0; bp <= 4; ++bp)
    for (int threads : {1, 2}) {
      Network net(Shape{1, 12, 12}, small_cnn());
      int head = net.head_start(bp);
      MemoryPlan plan = net.plan(16, head, threads);
      ThreadPool pool(threads);
      Arena arena;
      net.allocate(arena, 16, head, &pool, 1);
      for (int b = 0; b < static_cast<int>(Bucket::kCount); ++b)
        EXPECT_EQ(arena.bytes(static_cast<Bucket>(b)), plan.bytes(static_cast<Bucket>(b)))
            << "bp layers " << bp << ", bucket " << bucket_name(static_cast<Bucket>(b));
      EXPECT_EQ(plan.bytes(Bucket::kGradients) > 0, bp > 0);
      // One block of activations: for backprop, or of forward-only passes.
      EXPECT_EQ(plan.bytes(Bucket::kActivations) > 0, bp > 0);
      EXPECT_EQ(plan.bytes(Bucket::kForward) > 0, bp == 0);
    }
}

// A residual block's backward needs room for its gradients; in the body it only runs forward,
// and the plan's workspace is sized accordingly.
TEST(Network, BodyLayersPlanOnlyTheirForwardWorkspace) {
  ModelSpec m = model_by_name("resnet18:0.0625", Shape{1, 8, 8}, 3);
  Network net(m.item_shape, m.layers);
  size_t forward = 0, full = 0;
  for (int i = 0; i < net.num_layers(); ++i) {
    forward = std::max(forward, net.layer(i).forward_workspace_floats(net.input_shape(i, 4), 1));
    full = std::max(full, net.layer(i).workspace_floats(net.input_shape(i, 4), 1));
  }
  EXPECT_LT(forward, full);
  auto workspace = [&](int head) {
    for (const MemoryRow& r : net.plan(4, head, 1).rows)
      if (r.what == "workspace") return r.bytes;
    return size_t{0};
  };
  EXPECT_EQ(workspace(net.num_layers()), align_up(forward * sizeof(float)));
  EXPECT_EQ(workspace(0), align_up(full * sizeof(float)));
}

TEST(Network, FullBackpropMatchesFiniteDifferences) {
  Network net(Shape{1, 12, 12}, small_cnn());
  Arena arena;
  net.allocate(arena, 4, 0, nullptr, 3);
  fill_input(net, 4, 9);
  auto labels = labels_for(4);
  loss_and_grads(net, 4, labels, true);
  Rng pick(5, 5);
  for (ParamRef& p : net.params()) {
    for (int trial = 0; trial < 4; ++trial) {
      int64_t k = pick.below(static_cast<uint32_t>(p.value.numel()));
      const float h = 1e-2f, w = p.value[k];
      p.value[k] = w + h;
      double up = loss_and_grads(net, 4, labels, false);
      p.value[k] = w - h;
      double down = loss_and_grads(net, 4, labels, false);
      p.value[k] = w;
      double numeric = (up - down) / (2 * h);
      EXPECT_NEAR(p.grad[k], numeric, 2e-3 + 2e-2 * std::fabs(numeric))
          << p.name << "[" << k << "]";
    }
  }
}

TEST(Network, HeadGradientsEqualFullBackpropOnes) {
  Network full(Shape{1, 12, 12}, small_cnn()), elastic(Shape{1, 12, 12}, small_cnn());
  Arena a1, a2;
  full.allocate(a1, 8, 0, nullptr, 4);
  elastic.allocate(a2, 8, elastic.head_start(2), nullptr, 4);
  fill_input(full, 8, 2);
  fill_input(elastic, 8, 2);
  auto labels = labels_for(8);
  EXPECT_EQ(loss_and_grads(full, 8, labels, true), loss_and_grads(elastic, 8, labels, true));
  for (size_t i = 0; i < full.params().size(); ++i) {
    const ParamRef& f = full.params()[i];
    const ParamRef& e = elastic.params()[i];
    ASSERT_EQ(e.grad.empty(), e.layer < elastic.head());
    if (e.grad.empty()) continue;
    for (int64_t k = 0; k < f.grad.numel(); ++k) ASSERT_EQ(f.grad[k], e.grad[k]) << f.name;
  }
}

// A forward-only pass runs each ReLU before a max pooling after the pooling instead; a pass that
// backpropagates through them does not. Both give the same logits, bit for bit.
TEST(Network, ReluBeforeMaxPoolingRunsAfterItInForwardOnlyPasses) {
  for (const ModelSpec& m : {lenet5(Shape{1, 28, 28}, 10), pointnet(Shape{3, 1, 16}, 5, true)})
    for (bool training : {false, true}) {
      SCOPED_TRACE(m.name + (training ? " training" : " evaluation"));
      std::vector<std::vector<float>> logits;
      for (bool forward_only : {false, true}) {
        Network net(m.item_shape, m.layers);
        Arena arena;
        net.allocate(arena, 4, forward_only ? net.num_layers() : 0, nullptr, 7);
        net.set_mode({training, 0, false});
        fill_input(net, 4, 3);
        Tensor y = net.forward(4);
        logits.emplace_back(y.data(), y.data() + y.numel());
      }
      EXPECT_EQ(logits[0], logits[1]);
    }
}

// Forward-only passes fuse each max pooling into the convolution before it (past a ReLU, or
// directly): the logits equal those of passes that keep every activation, for every split, a
// frozen prefix, 1 and 2 threads and a partial batch; and the forward buffers hold no
// unpooled convolution output.
TEST(Network, MaxPoolingFusedIntoConvolutionsGivesTheSameLogits) {
  using L = LayerSpec;
  const std::vector<LayerSpec> specs = {
      L::conv2d(4, 3, 1, 1), L::max_pool(2), L::conv2d(5, 3, 1, 1), L::relu(),
      L::max_pool(2),        L::flatten(),   L::linear(6),          L::relu(),
      L::linear(3)};
  const Shape item{2, 12, 12};
  std::vector<float> want;
  for (int threads : {1, 2})
    for (int head : {0, 2, 4, 5, 6, 9})
      for (int frozen : {0, 1, 2}) {
        if (frozen > head || (head == 0 && frozen > 0)) continue;
        SCOPED_TRACE(::testing::Message()
                     << threads << " threads, head " << head << ", frozen " << frozen);
        Network net(item, specs);
        ThreadPool pool(threads);
        Arena arena;
        net.allocate(arena, 40, head, &pool, 7, frozen);
        EXPECT_EQ(arena.total_bytes(), net.plan(40, head, threads, frozen).total());
        fill_input(net, 40, 3);
        const Tensor y = net.forward(37);
        if (want.empty()) want.assign(y.data(), y.data() + y.numel());
        EXPECT_EQ(std::vector<float>(y.data(), y.data() + y.numel()), want);
      }
  Network net(item, specs);
  const size_t block = net.plan(40, net.num_layers(), 1).bytes(Bucket::kForward);
  EXPECT_GE(block, align_up(net.input_shape(2, 40).numel() * 4));
  EXPECT_LT(block, align_up(net.input_shape(1, 40).numel() * 4))
      << "the first pooling's output is planned, not the first convolution's";
}

// The model of the lanes and paired-passes tests (on 2x12x12): every kind of body layer, batch
// norm and dropout among them, a fused max pooling and a head.
std::vector<LayerSpec> body_passes_model() {
  using L = LayerSpec;
  return {L::conv2d(4, 3, 1, 1), L::batch_norm(), L::relu(),      L::max_pool(2),
          L::conv2d(5, 3, 1, 1), L::relu(),       L::max_pool(2), L::flatten(),
          L::linear(6),          L::dropout(0.3), L::relu(),      L::linear(3)};
}

// Perturbation lanes: body passes run at once, one per worker, give each pass's logits and
// batch norm statistics bit for bit as passes run one at a time on one thread; for Full ZO and
// a head, a frozen prefix, and fewer passes than lanes.
TEST(Network, LanesGiveTheLogitsOfOnePassAtATime) {
  const std::vector<LayerSpec> specs = body_passes_model();
  const Shape item{2, 12, 12};
  const ParamTransform shifts[3] = {[](const ParamRef& p, float* dst, int64_t b, int64_t e) {
                                      for (int64_t i = b; i < e; ++i)
                                        dst[i - b] = p.value[i] + 0.05f;
                                    },
                                    [](const ParamRef& p, float* dst, int64_t b, int64_t e) {
                                      for (int64_t i = b; i < e; ++i)
                                        dst[i - b] = p.value[i] * 0.9f;
                                    },
                                    [](const ParamRef& p, float* dst, int64_t b, int64_t e) {
                                      for (int64_t i = b; i < e; ++i)
                                        dst[i - b] = p.value[i] - 0.03f * static_cast<float>(i % 7);
                                    }};
  for (int lanes : {2, 3})
    for (int head : {12, 11, 8})
      for (int frozen : {0, 1})
        for (int n = 1; n <= lanes; ++n) {
          SCOPED_TRACE(::testing::Message() << lanes << " lanes, head " << head << ", frozen "
                                            << frozen << ", " << n << " passes");
          Network one(item, specs), many(item, specs);
          ThreadPool pool(lanes);
          Arena a1, a2;
          one.allocate(a1, 20, head, nullptr, 7, frozen);
          many.allocate(a2, 20, head, &pool, 7, frozen, lanes);
          EXPECT_EQ(a2.total_bytes(), many.plan(20, head, lanes, frozen, lanes).total());
          EXPECT_EQ(many.lanes(), lanes);
          for (Network* net : {&one, &many}) {
            fill_input(*net, 20, 3);
            net->set_mode({true, 5, false});
            net->forward_frozen(17);
          }
          std::vector<Tensor> want;
          for (int k = 0; k < n; ++k) {
            one.set_mode({true, 5, k == 0});
            want.push_back(one.forward_trained(17, &shifts[k]).clone());
          }
          std::vector<const ParamTransform*> body;
          for (int k = 0; k < n; ++k) body.push_back(&shifts[k]);
          many.set_mode({true, 5, true});
          const std::vector<Tensor> out = many.forward_lanes(17, body);
          ASSERT_EQ(static_cast<int>(out.size()), n);
          for (int k = 0; k < n; ++k) {
            many.set_mode({true, 5, k == 0});
            EXPECT_TRUE(test::bitwise_equal(many.forward_head(out[k]), want[k])) << "pass " << k;
          }
          for (size_t i = 0; i < one.state().size(); ++i)
            EXPECT_TRUE(test::bitwise_equal(one.state()[i].value, many.state()[i].value))
                << one.state()[i].name;
        }
}

// Paired passes: two body passes taking turns layer by layer give each pass's logits and batch
// norm statistics bit for bit as passes run one after the other, the second transform called
// after the first for each layer (so it may reuse what the first drew); for Full ZO and a head,
// a frozen prefix and 1 or 2 threads.
TEST(Network, PairedPassesGiveTheLogitsOfOnePassAtATime) {
  const std::vector<LayerSpec> specs = body_passes_model();
  const Shape item{2, 12, 12};
  // The layers the transforms were called for, first's as +, second's as -: once per layer, by
  // the call of each parameter's first range (the calls of a parameter run on the pool).
  std::vector<int> order;
  std::mutex order_mutex;
  auto record = [&](int layer, int64_t b) {
    const std::lock_guard<std::mutex> lock(order_mutex);
    if (b == 0 && (order.empty() || order.back() != layer)) order.push_back(layer);
  };
  const ParamTransform first = [&](const ParamRef& p, float* dst, int64_t b, int64_t e) {
    record(p.layer + 1, b);
    for (int64_t i = b; i < e; ++i) dst[i - b] = p.value[i] + 0.05f;
  };
  const ParamTransform second = [&](const ParamRef& p, float* dst, int64_t b, int64_t e) {
    record(-(p.layer + 1), b);
    for (int64_t i = b; i < e; ++i) dst[i - b] = p.value[i] - 0.03f * static_cast<float>(i % 7);
  };
  for (int threads : {1, 2})
    for (int head : {12, 11, 8})
      for (int frozen : {0, 1}) {
        SCOPED_TRACE(::testing::Message()
                     << threads << " threads, head " << head << ", frozen " << frozen);
        Network one(item, specs), paired(item, specs);
        ThreadPool pool(threads);
        Arena a1, a2;
        one.allocate(a1, 20, head, nullptr, 7, frozen);
        paired.allocate(a2, 20, head, &pool, 7, frozen, 1, true);
        EXPECT_EQ(a2.total_bytes(), paired.plan(20, head, threads, frozen, 1, true).total());
        EXPECT_GT(a2.total_bytes(), one.plan(20, head, threads, frozen).total());
        for (Network* net : {&one, &paired}) {
          fill_input(*net, 20, 3);
          net->set_mode({true, 5, false});
          net->forward_frozen(17);
        }
        std::vector<Tensor> want;
        for (int k = 0; k < 2; ++k) {
          one.set_mode({true, 5, k == 0});
          want.push_back(one.forward_trained(17, k == 0 ? &first : &second).clone());
        }
        order.clear();
        paired.set_mode({true, 5, true});
        const std::array<Tensor, 2> out = paired.forward_pair(17, &first, &second);
        EXPECT_FALSE(order.empty());
        EXPECT_EQ(order.size() % 2, 0u);
        for (size_t k = 1; k < order.size(); k += 2) EXPECT_EQ(order[k], -order[k - 1]) << k;
        for (int k = 0; k < 2; ++k) {
          paired.set_mode({true, 5, k == 0});
          EXPECT_TRUE(test::bitwise_equal(paired.forward_head(out[k]), want[k])) << "pass " << k;
        }
        for (size_t i = 0; i < one.state().size(); ++i)
          EXPECT_TRUE(test::bitwise_equal(one.state()[i].value, paired.state()[i].value))
              << one.state()[i].name;
      }
}

// Forward-only layers run batch norm and the ReLU after it as one pass; the logits are those of
// a network that runs them apart (head 0: every layer kept for backprop), bit for bit.
TEST(Network, BatchNormAndReluFusedGiveTheSameLogits) {
  using L = LayerSpec;
  const std::vector<LayerSpec> specs = {L::conv2d(6, 3, 1, 1), L::batch_norm(), L::relu6(),
                                        L::conv2d(4, 3, 2, 1), L::batch_norm(), L::relu(),
                                        L::flatten(),          L::linear(5)};
  std::vector<float> want;
  for (int threads : {1, 2})
    for (int head : {0, 3, 8}) {
      SCOPED_TRACE(::testing::Message() << threads << " threads, head " << head);
      Network net(Shape{2, 8, 8}, specs);
      ThreadPool pool(threads);
      Arena arena;
      net.allocate(arena, 12, head, &pool, 7);
      for (ParamRef& p : net.params())  // batch norm's gamma: outputs past ReLU6's cap
        if (p.name == "1.weight") p.value.fill(5.0f);
      fill_input(net, 12, 3);
      net.set_mode({true, 1, false});
      const Tensor y = net.forward(11);
      if (want.empty()) want.assign(y.data(), y.data() + y.numel());
      EXPECT_EQ(std::vector<float>(y.data(), y.data() + y.numel()), want);
    }
}

TEST(Network, ResultsDoNotDependOnThreadCount) {
  std::vector<std::vector<float>> grads;
  for (int threads : {1, 2, 3}) {
    ModelSpec m = lenet5(Shape{1, 28, 28}, 10);
    Network net(m.item_shape, m.layers);
    ThreadPool pool(threads);
    Arena arena;
    net.allocate(arena, 10, 0, &pool, 7);
    fill_input(net, 10, 3);
    loss_and_grads(net, 10, labels_for(10), true);
    std::vector<float> all;
    for (const ParamRef& p : net.params())
      all.insert(all.end(), p.grad.data(), p.grad.data() + p.grad.numel());
    grads.push_back(all);
  }
  EXPECT_EQ(grads[0], grads[1]);
  EXPECT_EQ(grads[0], grads[2]);
}

// Train and evaluation passes: batch norm uses the batch's statistics or the running ones, which
// only a pass with update_stats moves; dropout's mask follows the key, and evaluation keeps all.
TEST(Network, PassModesSwitchBatchNormAndDropout) {
  using L = LayerSpec;
  Network net(Shape{6}, {L::linear(8), L::batch_norm(), L::relu(), L::dropout(0.5), L::linear(5)});
  Arena arena;
  net.allocate(arena, 4, 0, nullptr, 3);
  fill_input(net, 4, 9);
  auto logits = [&](const PassMode& mode) {
    net.set_mode(mode);
    return net.forward(4).clone();
  };
  const Tensor a = logits({true, 1, false}), b = logits({true, 1, false}),
               c = logits({true, 2, false});
  EXPECT_TRUE(test::bitwise_equal(a, b));
  EXPECT_FALSE(test::bitwise_equal(a, c));
  const Tensor e1 = logits({false, 1, false}), e2 = logits({false, 2, false});
  EXPECT_TRUE(test::bitwise_equal(e1, e2)) << "evaluation ignores the key";
  EXPECT_EQ(net.state()[0].value[0], 0.0f);
  logits({true, 1, true});
  EXPECT_NE(net.state()[0].value[0], 0.0f) << "running mean moved";
  EXPECT_FALSE(test::bitwise_equal(e1, logits({false, 1, false})));
}

TEST(Network, FrozenLayersRunInEvaluationModeOnceAndTheirOutputIsKept) {
  using L = LayerSpec;
  const std::vector<LayerSpec> specs = {L::linear(8), L::batch_norm(), L::relu(),   L::dropout(0.5),
                                        L::linear(6), L::relu(),       L::linear(5)};
  for (int head : {4, 7}) {
    Network net(Shape{6}, specs);
    Arena arena;
    net.allocate(arena, 4, head, nullptr, 3, 4);
    EXPECT_EQ(arena.total_bytes(), net.plan(4, head, 1, 4).total());
    fill_input(net, 4, 9);
    net.set_mode({true, 1, true});
    const Tensor whole = net.forward(4).clone();
    net.set_mode({true, 2, true});
    EXPECT_TRUE(test::bitwise_equal(whole, net.forward(4))) << "no dropout in the frozen layers";
    EXPECT_EQ(net.state()[0].value[0], 0.0f) << "frozen running statistics stay";
    net.forward_frozen(4);
    const Tensor features = net.frozen_output(4).clone();
    const ParamTransform shift = [](const ParamRef& p, float* dst, int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i - b] = p.value[i] + 0.5f;
    };
    const Tensor shifted = net.forward_trained(4, &shift).clone();
    EXPECT_EQ(!test::bitwise_equal(whole, shifted), head == 7) << "only a body is perturbed";
    EXPECT_TRUE(test::bitwise_equal(features, net.frozen_output(4)));
    EXPECT_TRUE(test::bitwise_equal(whole, net.forward_trained(4)));
  }
}

// A perturbed pass runs large linear and ungrouped convolution layers in blocks of output
// features from a scratch of a block's size, and gives the bits of a pass with the perturbation
// written into the parameters (1 and 2 threads, 1 and 3 images, a last block shorter than the
// others). The rest of the linear plan is too small for 16 rows (a 25th of it is 13 rows), so its
// blocks take 8; the convolution's 200 channels of 6 x 3 x 3 + 1 take 144 and then 56 on one
// thread, and on two, whose workspace is twice as large, run whole. In a residual block, each
// child is written as it runs: the same convolution sets the scratch, the others fit beside it.
TEST(Network, PerturbedLayersRunInBlocksOfOutputFeaturesWithTheSameBits) {
  using L = LayerSpec;
  struct Case {
    Shape input;
    std::vector<LayerSpec> specs;
    int64_t batch, out, row_floats;  // out, row_floats: of the layer that sets the scratch
    int64_t rows[2];                 // of its blocks, on 1 and 2 threads (out: whole)
  };
  const std::vector<Case> cases = {
      {Shape{300}, {L::linear(204), L::relu(), L::linear(10)}, 1, 204, 301, {8, 8}},
      {Shape{6, 9, 9},
       {L::conv2d(200, 3, 1, 1), L::relu(), L::global_avg_pool(), L::linear(10)},
       3,
       200,
       6 * 9 + 1,
       {144, 200}},
      {Shape{6, 9, 9},
       {L::residual({L::conv2d(200, 3, 1, 1), L::batch_norm(), L::relu(), L::conv2d(6, 1, 1, 0),
                     L::batch_norm()},
                    {}, true),
        L::global_avg_pool(), L::linear(10)},
       3,
       200,
       6 * 9 + 1,
       {192, 200}},
  };
  for (const Case& c : cases)
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      Network net(c.input, c.specs);
      Arena arena;
      net.allocate(arena, c.batch, net.num_layers(), &pool, 5);
      const MemoryPlan plan = net.plan(c.batch, net.num_layers(), threads);
      EXPECT_EQ(arena.total_bytes(), plan.total());
      const int64_t rows = c.rows[threads - 1];
      size_t scratch = 0;
      for (const MemoryRow& r : plan.rows)
        if (r.what.rfind("perturbed parameters", 0) == 0) {
          scratch = r.bytes;
          EXPECT_EQ(r.what, rows == c.out ? "perturbed parameters"
                                          : "perturbed parameters (blocks of " +
                                                std::to_string(rows) + " rows)");
        }
      EXPECT_EQ(scratch, align_up(static_cast<size_t>(rows * c.row_floats) * sizeof(float)));
      fill_input(net, c.batch, 3);
      const ParamTransform shift = [](const ParamRef& p, float* dst, int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) dst[i - b] = p.value[i] + 0.01f * static_cast<float>(i % 5);
      };
      const Tensor blocked = net.forward(c.batch, &shift).clone();
      for (ParamRef& p : net.params()) shift(p, p.value.data(), 0, p.value.numel());
      EXPECT_TRUE(test::bitwise_equal(blocked, net.forward(c.batch)))
          << c.specs.size() << " layers, " << threads << " threads";
    }
}

// Backprop through dropout and batch norm in a training pass matches finite differences of the
// same pass (same key, so the same mask).
TEST(Network, BackpropThroughDropoutAndBatchNormMatchesFiniteDifferences) {
  using L = LayerSpec;
  Network net(Shape{5}, {L::linear(6), L::batch_norm(), L::relu(), L::dropout(0.3), L::linear(5)});
  Arena arena;
  net.allocate(arena, 4, 0, nullptr, 4);
  net.set_mode({true, 77, false});
  fill_input(net, 4, 10);
  const std::vector<uint8_t> labels = labels_for(4);
  loss_and_grads(net, 4, labels, true);
  ParamRef& w = net.params()[0];
  for (int64_t k : {0, 7, 13}) {
    const float keep = w.value[k], h = 1e-2f;
    w.value[k] = keep + h;
    const double up = loss_and_grads(net, 4, labels, false);
    w.value[k] = keep - h;
    const double down = loss_and_grads(net, 4, labels, false);
    w.value[k] = keep;
    EXPECT_NEAR(w.grad[k], (up - down) / (2 * h), 2e-3) << k;
  }
}

}  // namespace
}  // namespace zotrain
