#include "zotrain/train/trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "data/modelnet_standin.h"
#include "synthetic_data.h"
#include "test_util.h"
#include "zotrain/core/error.h"

namespace zotrain {
namespace {

using nlohmann::json;

TrainConfig small_config(const test::TempDir& dir, const std::string& out) {
  TrainConfig cfg;
  cfg.model = "lenet5";
  cfg.method = Method::kBp;
  cfg.data = dir.file("data");
  cfg.out = dir.file(out);
  cfg.epochs = 4;
  cfg.batch = 32;
  cfg.lr = 0.05;
  cfg.val_size = 100;
  cfg.seed = 1;
  return cfg;
}

std::vector<json> metrics(const std::string& out) {
  std::ifstream in(out + "/metrics.jsonl");
  std::vector<json> lines;
  for (std::string l; std::getline(in, l);) {
    json j = json::parse(l);
    // Wall-clock and process-level fields differ between any two runs.
    for (const char* k : {"seconds", "peak_rss_bytes"}) j.erase(k);
    lines.push_back(j);
  }
  return lines;
}

std::vector<float> params_of(const std::string& checkpoint) {
  Checkpoint c = read_checkpoint(checkpoint);
  std::vector<float> all;
  for (const auto& [name, t] : c.file.tensors)
    all.insert(all.end(), t.data(), t.data() + t.numel());
  return all;
}

// The values of a trainer's parameters, one vector per parameter.
std::vector<std::vector<float>> values_of(Trainer& t) {
  std::vector<std::vector<float>> v;
  for (const ParamView& p : t.parameters())
    v.emplace_back(static_cast<const float*>(p.data),
                   static_cast<const float*>(p.data) + p.shape.numel());
  return v;
}

// Runs `cfg` for one epoch, resumes it from its checkpoint up to cfg.epochs, and expects the
// parameters and metrics of the uninterrupted run in `reference` (a folder).
void expect_resume_matches(TrainConfig cfg, const std::string& reference) {
  const int epochs = cfg.epochs;
  cfg.epochs = 1;
  Trainer(cfg).run();
  cfg.epochs = epochs;
  Trainer resumed(cfg);
  resumed.resume(read_checkpoint(cfg.out + "/checkpoint.bin"));
  resumed.run();
  EXPECT_EQ(params_of(reference + "/checkpoint.bin"), params_of(cfg.out + "/checkpoint.bin"));
  EXPECT_EQ(metrics(reference), metrics(cfg.out));
}

TEST(Trainer, LeNet5LearnsTheSyntheticTask) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 800, 300, 1);
  Trainer trainer(small_config(dir, "run"));
  trainer.run();
  auto lines = metrics(dir.file("run"));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_GE(lines.back()["test_acc"].get<double>(), 0.9);
  EXPECT_EQ(lines.back()["forward_passes"].get<int64_t>(), 4 * ((700 + 31) / 32));
  std::ifstream s(dir.file("run") + "/summary.json");
  json summary = json::parse(s);
  EXPECT_EQ(summary["final_test_acc"], lines.back()["test_acc"]);
  EXPECT_EQ(summary["arena_bytes"], summary["planned_bytes"]);
  EXPECT_EQ(summary["config"]["model"], "lenet5");
}

TEST(Trainer, ResumedRunEqualsUninterruptedRunBitForBit) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 300, 100, 2);
  TrainConfig cfg = small_config(dir, "whole");
  cfg.epochs = 3;
  Trainer(cfg).run();
  cfg.out = dir.file("parts");
  expect_resume_matches(cfg, dir.file("whole"));
}

TEST(Trainer, ThreadCountDoesNotChangeTheResult) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 200, 50, 3);
  TrainConfig one = small_config(dir, "one");
  one.epochs = 1;
  TrainConfig two = one;
  two.out = dir.file("two");
  two.threads = 2;
  Trainer(one).run();
  Trainer(two).run();
  EXPECT_EQ(params_of(dir.file("one") + "/checkpoint.bin"),
            params_of(dir.file("two") + "/checkpoint.bin"));
}

TrainConfig elastic_config(const test::TempDir& dir, const std::string& out) {
  TrainConfig cfg = small_config(dir, out);
  cfg.method = Method::kElastic;
  cfg.bp_layers = 2;
  cfg.q = 2;
  cfg.zo_lr = 1e-3;
  cfg.zo_momentum = 0.5;
  cfg.sparsity = "0.2,1:0.5";
  cfg.epochs = 2;
  return cfg;
}

// Runs `cfg` on one and on two threads (into out + "1", "2"), expects the same parameters, and
// that a run resumed after its first epoch (out + "p") ends where the one-thread run did.
void expect_same_for_threads_and_resume(TrainConfig cfg) {
  const std::string out = cfg.out;
  TrainConfig two = cfg;
  cfg.out = out + "1", two.out = out + "2", two.threads = 2;
  Trainer(cfg).run();
  Trainer(two).run();
  EXPECT_EQ(params_of(cfg.out + "/checkpoint.bin"), params_of(two.out + "/checkpoint.bin"));
  TrainConfig parts = cfg;
  parts.out = out + "p";
  expect_resume_matches(parts, cfg.out);
}

TEST(Trainer, ElasticRunsAreDeterministicAcrossThreadsAndResumeExactly) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 200, 50, 4);
  expect_same_for_threads_and_resume(elastic_config(dir, "run"));
}

// PointNet on a small generated stand-in: batch norm (running statistics for evaluation, in the
// checkpoint) and dropout (one mask per step) train, run the same on any thread count and resume
// exactly.
TrainConfig pointnet_config(const test::TempDir& dir, const std::string& out) {
  TrainConfig cfg = small_config(dir, out);
  cfg.model = "pointnet";
  cfg.data = dir.file("clouds");
  cfg.points = 32;
  cfg.batch = 16;
  cfg.lr = 0.01;
  cfg.val_size = 20;
  cfg.epochs = 3;
  return cfg;
}

void write_clouds(const test::TempDir& dir) {
  StandinOptions o;
  o.train_per_class = 16, o.test_per_class = 8, o.points = 64;
  write_modelnet40_standin(dir.file("clouds"), o);
}

TEST(Trainer, PointNetLearnsTheStandinAndEvaluatesWithRunningStatistics) {
  ZT_REQUIRE_HDF5();
  test::TempDir dir;
  write_clouds(dir);
  TrainConfig cfg = pointnet_config(dir, "bp");
  cfg.epochs = 6;
  Trainer trainer(cfg);
  trainer.run();
  const double acc = metrics(dir.file("bp")).back()["test_acc"].get<double>();
  EXPECT_GE(acc, 0.5);  // 10 classes; measured 0.65
  // The checkpoint's running statistics are what evaluation used: with the initial ones (mean 0,
  // variance 1) the same weights score otherwise.
  Checkpoint ckpt = read_checkpoint(dir.file("bp") + "/checkpoint.bin");
  EXPECT_NO_THROW(ckpt.file.get("state/1.running_mean", Shape{64}, ckpt.path));
  for (ParamRef& s : trainer.network().state())
    s.value.fill(s.name.find("var") != std::string::npos ? 1.0f : 0.0f);
  const auto test = trainer.data().batches(Split::kTest, 16, false, 0);
  EXPECT_NE(evaluate(trainer.network(), *test), acc);
}

TEST(Trainer, PointNetElasticIsDeterministicAcrossThreadsAndResumesExactly) {
  ZT_REQUIRE_HDF5();
  test::TempDir dir;
  write_clouds(dir);
  TrainConfig cfg = pointnet_config(dir, "run");
  cfg.method = Method::kElastic;
  cfg.bp_layers = 2;
  cfg.epochs = 2;
  expect_same_for_threads_and_resume(cfg);
}

// The q schedule: q per epoch in metrics.jsonl, forward passes counted with it, the ZO step
// zo_lr (q / q0)^q_lr_exponent with it, and a resumed run continues the controller exactly.
TEST(Trainer, QSchedulerRecordsItsTrajectoryAndResumesExactly) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 200, 50, 6);
  TrainConfig cfg = small_config(dir, "whole");
  cfg.method = Method::kZo;
  cfg.q_schedule = QSchedule::kQScheduler;
  cfg.q0 = 1, cfg.q_patience = 1, cfg.q_tau = 1.0, cfg.q_max = 4;  // tau 1: never improves
  cfg.q_lr_exponent = 0.5;
  cfg.lr_step = 2;
  cfg.epochs = 4;
  Trainer(cfg).run();
  const auto lines = metrics(dir.file("whole"));
  std::vector<int> qs;
  for (const json& l : lines) qs.push_back(l["q"].get<int>());
  EXPECT_EQ(qs, (std::vector<int>{1, 1, 2, 4}));  // the first epoch sets the best
  for (size_t e = 0; e < lines.size(); ++e)
    EXPECT_DOUBLE_EQ(lines[e]["zo_lr"].get<double>(),
                     cfg.zo_lr * std::pow(cfg.lr_decay, e / 2) * std::sqrt(qs[e]))
        << "epoch " << e + 1;
  const int64_t steps = (100 + 31) / 32;
  EXPECT_EQ(lines.back()["forward_passes"].get<int64_t>(), 2 * steps * (1 + 1 + 2 + 4));
  cfg.out = dir.file("parts");
  expect_resume_matches(cfg, dir.file("whole"));
}

TEST(Trainer, ArenaMatchesThePlanAndPassesAreCountedForEveryMethod) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 100, 20, 5);
  for (std::string method : {"bp", "zo", "elastic"})
    for (std::string estimator : {"spsa", "forward"})
      for (std::string head : {"perturbed", "clean"}) {
        const std::string what = method + " " + estimator + " " + head;
        TrainConfig cfg = elastic_config(dir, method + estimator + head);
        cfg.method = parse_name<Method>("method", method);
        cfg.estimator = parse_name<zo::Estimator>("estimator", estimator);
        cfg.head_grad = parse_name<HeadGrad>("head_grad", head);
        cfg.epochs = 1;
        cfg.val_size = 20;
        Trainer t(cfg);
        t.run();
        EXPECT_GT(metrics(cfg.out)[0]["train_acc"].get<double>(), 0.0) << what;
        for (int b = 0; b < static_cast<int>(Bucket::kCount); ++b)
          EXPECT_EQ(t.arena().bytes(static_cast<Bucket>(b)),
                    t.plan().bytes(static_cast<Bucket>(b)));
        const int64_t steps = (80 + 31) / 32, q = cfg.q;
        const bool fwd = estimator == "forward";
        // Forward differences and a clean head add a clean pass; the head backprops once after
        // it, or after each of SPSA's 2q perturbed passes.
        const bool clean_pass = fwd || (method == "elastic" && head == "clean");
        const int64_t forward = method == "bp" ? 1 : (fwd ? q : 2 * q) + clean_pass;
        const int64_t backward = method == "bp" ? 1 : method == "zo" ? 0 : clean_pass ? 1 : 2 * q;
        EXPECT_EQ(t.state().forward_passes, steps * forward) << what;
        EXPECT_EQ(t.state().backward_passes, steps * backward) << what;
      }
}

// The estimator options of the one ZO step (issue 17): each changes the run, keeps it the same
// on any thread count, resumes exactly (its state is in the checkpoint) and fits the plan.
TEST(Trainer, ZoEstimatorOptionsAreDeterministicResumableAndPlanned) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 200, 50, 4);
  const std::vector<float> plain = [&] {
    TrainConfig cfg = elastic_config(dir, "plain");
    Trainer(cfg).run();
    return params_of(cfg.out + "/checkpoint.bin");
  }();
  using Option = void (*)(TrainConfig&);
  const std::vector<std::pair<std::string, Option>> options = {
      {"adam", [](TrainConfig& c) { c.zo_optimizer = zo::Optimizer::kAdam; }},
      {"adam-no-momentum",
       [](TrainConfig& c) { c.zo_optimizer = zo::Optimizer::kAdam, c.zo_momentum = 0; }},
      {"dim", [](TrainConfig& c) { c.zo_layer_scale = zo::LayerScale::kDim; }},
      {"rms", [](TrainConfig& c) { c.zo_layer_scale = zo::LayerScale::kRms; }},
      {"cyclic", [](TrainConfig& c) { c.zo_layer_scale = zo::LayerScale::kCyclic; }},
      {"cyclic-weighted",
       [](TrainConfig& c) { c.zo_layer_scale = zo::LayerScale::kCyclic, c.zo_cycle_power = 0.5; }},
      {"cyclic-scaled",
       [](TrainConfig& c) {
         c.zo_layer_scale = zo::LayerScale::kCyclic, c.zo_cycle_scale_power = 0.5;
       }},
      {"cyclic-activity",
       [](TrainConfig& c) {
         c.zo_layer_scale = zo::LayerScale::kCyclic, c.zo_activity = true, c.zo_activity_lr = 0.01;
       }},
      {"cyclic-activity-adam",
       [](TrainConfig& c) {
         c.zo_layer_scale = zo::LayerScale::kCyclic, c.zo_activity = true;
         c.zo_optimizer = zo::Optimizer::kAdam;
       }},
      {"normalize", [](TrainConfig& c) { c.zo_normalize = true; }},
      {"magnitude", [](TrainConfig& c) { c.zo_mask = zo::Mask::kMagnitude; }},
  };
  for (const auto& [name, set] : options) {
    SCOPED_TRACE(name);
    TrainConfig cfg = elastic_config(dir, name);
    set(cfg);
    expect_same_for_threads_and_resume(cfg);
    EXPECT_NE(params_of(cfg.out + "1/checkpoint.bin"), plain);
    Trainer t(cfg);
    for (int b = 0; b < static_cast<int>(Bucket::kCount); ++b)
      EXPECT_EQ(t.arena().bytes(static_cast<Bucket>(b)), t.plan().bytes(static_cast<Bucket>(b)))
          << bucket_name(static_cast<Bucket>(b));
  }
}

// zo_activity: a linear layer's turns run 2q passes as the weights' turns do, and change only
// that layer; a linear layer with batch norm after it perturbs its weights instead, and a body
// with no linear layer to estimate by its outputs is refused, naming why.
TEST(Trainer, ActivityTurnsMoveTheLinearLayerOnlyAndNeedExamplesApart) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 200, 50, 4);
  TrainConfig cfg = elastic_config(dir, "activity");
  cfg.zo_layer_scale = zo::LayerScale::kCyclic;
  cfg.zo_activity = true;
  cfg.zo_momentum = 0;
  cfg.epochs = 1;
  Trainer t(cfg);
  auto batches = t.data().batches(Split::kTrain, cfg.batch, false, 0);
  // The body's turns: conv1, conv2, then fc1's (step 2) by its outputs.
  for (int step = 0; step < 2; ++step) t.step(*batches, 0);
  const std::vector<std::vector<float>> before = values_of(t);
  t.step(*batches, 0);
  EXPECT_EQ(t.state().forward_passes, 3 * 2 * cfg.q);
  const std::vector<std::vector<float>> after = values_of(t);
  const std::vector<ParamView> params = t.parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    const int layer = std::stoi(params[i].name);
    const bool fc1 = layer == t.network().param_layers()[2];
    // The head (fc2, fc3) moves every step; the convolutions wait for their turns.
    const bool head = layer >= t.head();
    EXPECT_EQ(before[i] != after[i], fc1 || head) << params[i].name;
  }
  // PointNet: batch norm follows fc 512 and fc 256, so Full ZO estimates only the last linear
  // layer by its outputs and the others by their weights, each on its turn.
  write_clouds(dir);
  TrainConfig full = pointnet_config(dir, "full");
  full.method = Method::kZo;
  full.zo_layer_scale = zo::LayerScale::kCyclic;
  full.zo_activity = true;
  Trainer pointnet(full);
  const std::vector<int> layers = pointnet.network().param_layers();
  const std::string tapped = "(layers " + std::to_string(layers.back()) + " by outputs)";
  EXPECT_TRUE(
      std::any_of(pointnet.plan().rows.begin(), pointnet.plan().rows.end(),
                  [&](const MemoryRow& r) { return r.what.find(tapped) != std::string::npos; }))
      << tapped;
  auto clouds = pointnet.data().batches(Split::kTrain, full.batch, false, 0);
  const std::vector<std::vector<float>> start = values_of(pointnet);
  for (size_t step = 0; step < layers.size(); ++step) pointnet.step(*clouds, 0);
  const std::vector<std::vector<float>> cycled = values_of(pointnet);
  for (size_t i = 0; i < start.size(); ++i)
    EXPECT_NE(start[i], cycled[i]) << pointnet.parameters()[i].name;
  // The hybrid's body holds only those two: refused, naming why.
  TrainConfig norm = pointnet_config(dir, "norm");
  norm.method = Method::kElastic;
  norm.bp_layers = 1;
  norm.zo_layer_scale = zo::LayerScale::kCyclic;
  norm.zo_activity = true;
  try {
    Trainer refused(norm);
    FAIL();
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no trained body layer"), std::string::npos) << what;
    EXPECT_NE(what.find("mixes a batch's examples"), std::string::npos) << what;
  }
}

// zo_activity_scale_power: a linear layer of m outputs steps at zo_activity_lr (m_max / m)^a.
// Full ZO on LeNet-5 turns through conv1, conv2, fc1 (120 outputs, the widest: its step
// unchanged), fc2 (84) and fc3 (10); plain SGD, so fc2's move on its turn scales by 120 / 84.
TEST(Trainer, ActivityStepScalesWithTheLayersOutputCount) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 200, 50, 4);
  const auto moves = [&](double power) {
    TrainConfig cfg = elastic_config(dir, "scale" + std::to_string(power));
    cfg.method = Method::kZo;
    cfg.zo_layer_scale = zo::LayerScale::kCyclic;
    cfg.zo_activity = true;
    cfg.zo_activity_scale_power = power;
    cfg.zo_momentum = 0;
    Trainer t(cfg);
    auto batches = t.data().batches(Split::kTrain, cfg.batch, false, 0);
    for (int step = 0; step < 3; ++step) t.step(*batches, 0);
    const std::vector<std::vector<float>> before = values_of(t);
    t.step(*batches, 0);
    std::vector<std::vector<float>> move = values_of(t);
    // Only fc2's parameters moved.
    const int fc2 = t.network().param_layers()[3];
    const std::vector<ParamView> params = t.parameters();
    for (size_t i = 0; i < move.size(); ++i) {
      EXPECT_EQ(move[i] != before[i], std::stoi(params[i].name) == fc2) << params[i].name;
      for (size_t k = 0; k < move[i].size(); ++k) move[i][k] -= before[i][k];
    }
    return std::pair{before, move};
  };
  const auto [before0, move0] = moves(0.0);
  const auto [before1, move1] = moves(1.0);
  EXPECT_EQ(before0, before1);  // conv1, conv2 and fc1 moved as without the power
  double dot = 0, norm0 = 0;
  for (size_t i = 0; i < move0.size(); ++i)
    for (size_t k = 0; k < move0[i].size(); ++k)
      dot += double{move0[i][k]} * move1[i][k], norm0 += double{move0[i][k]} * move0[i][k];
  EXPECT_NEAR(dot / norm0, 120.0 / 84.0, 1e-3);
}

// ema_decay: training takes the same steps (the parameters and losses of the run without it);
// the checkpoint holds the average of the parameters after every step, which the epochs'
// accuracies, the checkpoint's evaluation and --init read; resuming continues it exactly; the
// arena holds what the plan says.
TEST(Trainer, ParameterAverageChangesEvaluationNotTraining) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 200, 50, 4);
  TrainConfig plain = elastic_config(dir, "plain");
  Trainer(plain).run();
  TrainConfig cfg = elastic_config(dir, "ema");
  cfg.ema_decay = 0.9;
  expect_same_for_threads_and_resume(cfg);
  const std::string out = cfg.out + "1";
  const std::vector<json> with = metrics(out), without = metrics(plain.out);
  ASSERT_EQ(with.size(), without.size());
  for (size_t e = 0; e < with.size(); ++e) {
    EXPECT_EQ(with[e]["train_loss"], without[e]["train_loss"]);
    EXPECT_EQ(with[e]["train_acc"], without[e]["train_acc"]);
  }
  const Checkpoint ckpt = read_checkpoint(out + "/checkpoint.bin");
  const Checkpoint base = read_checkpoint(plain.out + "/checkpoint.bin");
  for (const auto& [name, t] : base.file.tensors)
    if (name.rfind("param/", 0) == 0) {
      const Tensor* live = ckpt.file.find(name);
      ASSERT_NE(live, nullptr) << name;
      EXPECT_TRUE(std::equal(t.data(), t.data() + t.numel(), live->data())) << name;
    }

  // The average, recomputed from the parameters after each step, with the default warm-up and a
  // short one.
  for (const int warmup : {10, 3}) {
    SCOPED_TRACE("ema_warmup " + std::to_string(warmup));
    TrainConfig s = cfg;
    s.out = dir.file("by-step" + std::to_string(warmup));
    s.epochs = 1;
    s.ema_warmup = warmup;
    Trainer stepped(s);
    auto batches = stepped.data().batches(Split::kTrain, s.batch, false, 0);
    std::vector<std::vector<float>> average;
    for (const ParamView& p : stepped.parameters())
      average.emplace_back(static_cast<const float*>(p.data),
                           static_cast<const float*>(p.data) + p.shape.numel());
    for (int64_t step = 1; step <= 3; ++step) {
      stepped.step(*batches, 0);
      const auto d = static_cast<float>(std::min(0.9, (1.0 + step) / (warmup + step)));
      const std::vector<ParamView> params = stepped.parameters();
      for (size_t i = 0; i < params.size(); ++i)
        for (size_t j = 0; j < average[i].size(); ++j)
          average[i][j] =
              d * average[i][j] + (1 - d) * static_cast<const float*>(params[i].data)[j];
    }
    const Checkpoint after = stepped.checkpoint();
    const std::vector<ParamView> params = stepped.parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      const Tensor& t = after.file.get("ema/" + params[i].name, params[i].shape, "in memory");
      EXPECT_TRUE(std::equal(average[i].begin(), average[i].end(), t.data())) << params[i].name;
      EXPECT_FALSE(std::equal(average[i].begin(), average[i].end(),
                              static_cast<const float*>(params[i].data)))
          << params[i].name;
    }
    for (int b = 0; b < static_cast<int>(Bucket::kCount); ++b)
      EXPECT_EQ(stepped.arena().bytes(static_cast<Bucket>(b)),
                stepped.plan().bytes(static_cast<Bucket>(b)))
          << bucket_name(static_cast<Bucket>(b));
    EXPECT_GT(stepped.plan().bytes(Bucket::kOptimizer),
              Trainer(plain).plan().bytes(Bucket::kOptimizer));
  }

  // The checkpoint's evaluation is the last epoch's test accuracy, of the average.
  const double last = with.back()["test_acc"].get<double>();
  EXPECT_EQ(evaluate_checkpoint(ckpt, cfg.data, 32, 1), last);
  // --init starts from the average.
  TrainConfig init = elastic_config(dir, "init");
  init.init = out + "/checkpoint.bin";
  Trainer from(init);
  for (const ParamView& p : from.parameters()) {
    const Tensor& t = ckpt.file.get("ema/" + p.name, p.shape, "ema");
    EXPECT_TRUE(std::equal(t.data(), t.data() + t.numel(), static_cast<const float*>(p.data)))
        << p.name;
  }
}

// Residual blocks in the head (backprop from their kept activations, or recomputed) and in the
// body (perturbed passes).
TEST(Trainer, ResidualModelsTrainInThePlannedArenaForAnyThreadCount) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 64, 16, 7);
  for (std::string model : {"resnet18:0.0625", "mobilenetv2:0.1"})
    for (std::string method : {"bp", "elastic"}) {
      const std::string what = model + " " + method;
      TrainConfig cfg = elastic_config(dir, what);
      cfg.model = model;
      cfg.method = parse_name<Method>("method", method);
      cfg.epochs = 1;
      cfg.batch = 16;
      cfg.val_size = 16;
      Trainer t(cfg);
      t.run();
      EXPECT_TRUE(std::isfinite(metrics(cfg.out)[0]["train_loss"].get<double>())) << what;
      for (int b = 0; b < static_cast<int>(Bucket::kCount); ++b)
        EXPECT_EQ(t.arena().bytes(static_cast<Bucket>(b)), t.plan().bytes(static_cast<Bucket>(b)))
            << what;
      // Recomputing the blocks' activations in backward: the same parameters, less memory where
      // the head has several blocks (BP), no more where it has one or none.
      TrainConfig again = cfg;
      again.recompute_blocks = true;
      again.out = dir.file(what + " recomputed");
      Trainer r(again);
      r.run();
      EXPECT_EQ(params_of(dir.file(what) + "/checkpoint.bin"),
                params_of(again.out + "/checkpoint.bin"))
          << what;
      EXPECT_EQ(r.arena().total_bytes(), r.plan().total()) << what;
      if (method == "bp")
        EXPECT_LT(r.plan().total(), t.plan().total()) << what;
      else
        EXPECT_LE(r.plan().total(), t.plan().total()) << what;
      if (method == "bp") continue;  // elastic has both kinds of pass
      cfg.threads = 2;
      cfg.out = dir.file(what + " threads");
      Trainer(cfg).run();
      EXPECT_EQ(params_of(dir.file(what) + "/checkpoint.bin"),
                params_of(cfg.out + "/checkpoint.bin"))
          << what;
    }
}

// Perturbation lanes (zo_lanes) run the perturbed passes' bodies at once; the parameters,
// metrics and batch norm statistics are those of one pass at a time, and the arena is the plan.
TEST(Trainer, PerturbationLanesDoNotChangeTheResult) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 100, 20, 8);
  struct Case {
    std::string model, method, estimator, head_grad;
    int train_layers, lanes;
  };
  const Case cases[] = {
      {"lenet5", "zo", "spsa", "perturbed", 0, 2},
      {"lenet5", "zo", "forward", "perturbed", 0, 3},    // 2 passes: one lane stays idle
      {"lenet5", "elastic", "spsa", "perturbed", 0, 3},  // 4 passes: 3, then 1 on the pool
      {"lenet5", "elastic", "spsa", "clean", 3, 2},      // a frozen prefix and a clean head
      {"mobilenetv2:0.1", "elastic", "spsa", "perturbed", 0, 2},  // batch norm in the body
  };
  for (const Case& c : cases) {
    const std::string what = c.model + " " + c.method + " " + c.estimator + " " + c.head_grad +
                             " " + std::to_string(c.lanes) + " lanes";
    TrainConfig cfg = elastic_config(dir, what);
    cfg.model = c.model, cfg.method = parse_name<Method>("method", c.method);
    cfg.estimator = parse_name<zo::Estimator>("estimator", c.estimator);
    cfg.head_grad = parse_name<HeadGrad>("head_grad", c.head_grad);
    cfg.train_layers = c.train_layers;
    cfg.epochs = 1, cfg.batch = 16, cfg.val_size = 16;
    Trainer(cfg).run();
    TrainConfig lanes = cfg;
    lanes.out += " lanes";
    lanes.threads = lanes.zo_lanes = c.lanes;
    Trainer t(lanes);
    ASSERT_EQ(t.network().lanes(), c.lanes) << what;
    t.run();
    EXPECT_EQ(params_of(cfg.out + "/checkpoint.bin"), params_of(lanes.out + "/checkpoint.bin"))
        << what;
    std::vector<json> want = metrics(cfg.out), got = metrics(lanes.out);
    for (std::vector<json>* m : {&want, &got})
      for (json& line : *m) line.erase("arena_bytes");  // the lanes' buffers
    EXPECT_EQ(want, got) << what;
    for (int b = 0; b < static_cast<int>(Bucket::kCount); ++b)
      EXPECT_EQ(t.arena().bytes(static_cast<Bucket>(b)), t.plan().bytes(static_cast<Bucket>(b)))
          << what;
  }
}

// Paired passes (zo_pair_passes) run each sample's +z and -z bodies layer by layer and draw
// each layer's z once; the parameters and metrics are those of unpaired passes, and the arena is
// the plan.
TEST(Trainer, PairedPassesDoNotChangeTheResult) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 100, 20, 8);
  struct Case {
    std::string model, method, option;
    int train_layers, threads;
  };
  const Case cases[] = {
      {"lenet5", "zo", "q 2", 0, 1},
      {"lenet5", "elastic", "sparsity", 0, 2},     // a random mask, on two threads
      {"lenet5", "zo", "magnitude", 0, 1},         // the magnitude mask: thresholds per step
      {"lenet5", "zo", "cyclic", 0, 1},            // layers that are not the step's copied
      {"lenet5", "elastic", "frozen", 3, 1},       // a frozen prefix
      {"mobilenetv2:0.1", "elastic", "bn", 0, 1},  // batch norm and residual blocks in the body
  };
  for (const Case& c : cases) {
    const std::string what = c.model + " " + c.method + " " + c.option;
    TrainConfig cfg = elastic_config(dir, what);
    cfg.model = c.model, cfg.method = parse_name<Method>("method", c.method);
    cfg.train_layers = c.train_layers, cfg.threads = c.threads;
    cfg.epochs = 1, cfg.batch = 16, cfg.val_size = 16;
    if (c.option == "q 2") cfg.q = 2;
    if (c.option == "sparsity" || c.option == "magnitude") cfg.sparsity = "0.5";
    if (c.option == "magnitude") cfg.zo_mask = zo::Mask::kMagnitude;
    if (c.option == "cyclic") cfg.zo_layer_scale = zo::LayerScale::kCyclic;
    cfg.zo_pair_passes = false;
    Trainer(cfg).run();
    TrainConfig paired = cfg;
    paired.out += " paired";
    paired.zo_pair_passes = true;
    Trainer t(paired);
    t.run();
    EXPECT_EQ(params_of(cfg.out + "/checkpoint.bin"), params_of(paired.out + "/checkpoint.bin"))
        << what;
    std::vector<json> want = metrics(cfg.out), got = metrics(paired.out);
    for (std::vector<json>* m : {&want, &got})
      for (json& line : *m) line.erase("arena_bytes");  // the second pass's activations
    EXPECT_EQ(want, got) << what;
    for (int b = 0; b < static_cast<int>(Bucket::kCount); ++b)
      EXPECT_EQ(t.arena().bytes(static_cast<Bucket>(b)), t.plan().bytes(static_cast<Bucket>(b)))
          << what;
  }
}

TEST(Trainer, MemoryBudgetPicksTheLargestHeadThatFits) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 100, 20, 6);
  TrainConfig cfg = elastic_config(dir, "budget");
  ModelSpec m = lenet5(Shape{1, 28, 28}, 10);
  Network net(m.item_shape, m.layers);
  cfg.memory_budget = static_cast<int64_t>(training_plan(net, cfg, net.head_start(3)).total());
  EXPECT_EQ(choose_head(net, cfg), net.head_start(3));
  cfg.memory_budget -= 1;
  EXPECT_EQ(choose_head(net, cfg), net.head_start(2));
  cfg.memory_budget = 1000;
  try {
    choose_head(net, cfg);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("too small even for Full ZO"), std::string::npos);
  }
}

// A weight gone NaN where the loss stays finite (conv1's NaN outputs become 0 in the ReLU) is
// caught before the checkpoint, naming the tensor; the run used to save it and exit 0 (issue 22,
// defect 3). The previous checkpoint stays.
TEST(Trainer, NonFiniteParametersAreNeverCheckpointed) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 100, 20, 8);
  TrainConfig cfg = elastic_config(dir, "nan");
  cfg.method = Method::kZo, cfg.epochs = 2, cfg.batch = 16, cfg.val_size = 16;
  Trainer t(cfg);
  std::vector<ParamRef>& params = t.network().params();
  ASSERT_EQ(params[0].name, "0.weight");
  params[0].value[3] = std::numeric_limits<float>::quiet_NaN();
  try {
    t.run();
    FAIL() << "a NaN weight was checkpointed";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 0.weight"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(cfg.out + "/checkpoint.bin"));
}

// A run removes the temporary checkpoints of killed runs in its folder, not those of live
// processes (issue 22, defect 12: kill -9 mid-write left checkpoint.bin.tmp.<pid> forever).
TEST(Trainer, StaleTemporaryCheckpointsAreRemoved) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 100, 20, 8);
  TrainConfig cfg = elastic_config(dir, "stale");
  cfg.epochs = 1, cfg.batch = 16, cfg.val_size = 16;
  std::filesystem::create_directories(cfg.out);
  const std::string dead = cfg.out + "/checkpoint.bin.tmp.99999999";  // above any pid_max
  const std::string alive = cfg.out + "/checkpoint.bin.tmp.1";        // init
  std::ofstream(dead) << "partial";
  std::ofstream(alive) << "partial";
  Trainer(cfg).run();
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_TRUE(std::filesystem::exists(alive));
  EXPECT_TRUE(std::filesystem::exists(cfg.out + "/checkpoint.bin"));
}

TEST(Trainer, RejectsBadConfigBeforeLoadingData) {
  TrainConfig cfg;
  cfg.data = "/nonexistent";
  cfg.batch = 0;
  try {
    Trainer t(cfg);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("batch"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zotrain
