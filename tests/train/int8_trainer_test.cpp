// Integer-only training end to end on the synthetic task: every method learns, the arena equals
// the plan, the sign-agreement diagnostic is recorded, and a resumed run is bit-identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/modelnet_standin.h"
#include "synthetic_data.h"
#include "test_util.h"
#include "train/param_average.h"
#include "zotrain/core/error.h"
#include "zotrain/train/trainer.h"

namespace zotrain {
namespace {

using nlohmann::json;

TrainConfig int8_config(const test::TempDir& dir, const std::string& out, const std::string& method,
                        int bp_layers) {
  TrainConfig cfg;
  cfg.model = "lenet5";
  cfg.precision = Precision::kInt8;
  cfg.method = parse_name<Method>("method", method);
  cfg.bp_layers = bp_layers;
  cfg.data = dir.file("data");
  cfg.out = dir.file(out);
  cfg.epochs = 3;
  cfg.batch = 32;
  cfg.val_size = 100;
  cfg.seed = 3;
  cfg.int_eps = 7;
  cfg.bp_bits = "5,2:4";
  return cfg;
}

// Line `index` of a run's metrics.jsonl (an epoch's), or its last line for -1.
json metrics_at(const std::string& out, int index) {
  std::ifstream in(out + "/metrics.jsonl");
  std::string line, last;
  for (int i = 0; (index < 0 || i <= index) && std::getline(in, line); ++i) last = line;
  return json::parse(last);
}

json last_metrics(const std::string& out) {
  return metrics_at(out, -1);
}

void expect_same_checkpoints(const std::string& out_a, const std::string& out_b) {
  const Checkpoint a = read_checkpoint(out_a + "/checkpoint.bin");
  const Checkpoint b = read_checkpoint(out_b + "/checkpoint.bin");
  ASSERT_EQ(a.file.tensors.size(), b.file.tensors.size());
  for (size_t i = 0; i < a.file.tensors.size(); ++i) {
    const Tensor& x = a.file.tensors[i].second;
    const Tensor& y = b.file.tensors[i].second;
    EXPECT_EQ(std::vector<float>(x.data(), x.data() + x.numel()),
              std::vector<float>(y.data(), y.data() + y.numel()))
        << a.file.tensors[i].first;
  }
}

// Runs `part` for one epoch, resumes it from its checkpoint to its epochs, and expects the
// checkpoint and last test accuracy of the uninterrupted run in `reference` (a folder).
void expect_resume_matches(TrainConfig part, const std::string& reference) {
  const int epochs = part.epochs;
  part.epochs = 1;
  Trainer(part).run();
  part.epochs = epochs;
  Trainer resumed(part);
  resumed.resume(read_checkpoint(part.out + "/checkpoint.bin"));
  resumed.run();
  expect_same_checkpoints(reference, part.out);
  EXPECT_EQ(last_metrics(reference)["test_acc"], last_metrics(part.out)["test_acc"]);
}

class Int8Training : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::write_synthetic_data(dir_->file("data"), 800, 300, 1); }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static test::TempDir* dir_;
};
test::TempDir* Int8Training::dir_ = new test::TempDir;

TEST_F(Int8Training, FullBpLearnsAndTheArenaMatchesThePlan) {
  Trainer t(int8_config(*dir_, "bp", "bp", 0));
  t.run();
  const json m = last_metrics(dir_->file("bp"));
  EXPECT_GE(m["test_acc"].get<double>(), 0.9);
  EXPECT_EQ(m["bp_bits"].get<double>(), 4.0);  // the schedule switched at epoch 2
  EXPECT_EQ(t.arena().total_bytes(), t.plan().total());
  // Weights are int8: the parameter bucket holds one byte per weight (no f32 copy).
  EXPECT_LT(t.arena().bytes(Bucket::kParameters), 62000u);
  ASSERT_NE(t.int8_network(), nullptr);
}

// An MLP's first layer is a flatten: the head's backward has nothing to do there (it used to
// write the input's gradient to no buffer).
TEST_F(Int8Training, FullBpOfAnMlpWhoseFirstLayerHasNoWeightsLearns) {
  TrainConfig cfg = int8_config(*dir_, "mlp", "bp", 0);
  cfg.model = "mlp:32";
  Trainer(cfg).run();
  EXPECT_GE(last_metrics(dir_->file("mlp"))["test_acc"].get<double>(), 0.8);
}

TEST_F(Int8Training, ElasticZoIntegerSignLearnsAndRecordsAgreement) {
  TrainConfig cfg = int8_config(*dir_, "cls1", "elastic", 2);
  cfg.sign_agreement = true;
  Trainer t(cfg);
  t.run();
  const json m = last_metrics(dir_->file("cls1"));
  EXPECT_GE(m["test_acc"].get<double>(), 0.6);
  ASSERT_TRUE(m.contains("sign_agreement"));
  EXPECT_GT(m["sign_agreement"].get<double>(), 0.0);
  EXPECT_LE(m["sign_agreement"].get<double>(), 1.0);
  EXPECT_EQ(t.arena().total_bytes(), t.plan().total());
  // Two forward passes per step, and a backward for each.
  EXPECT_EQ(m["forward_passes"], m["backward_passes"]);
}

TEST_F(Int8Training, FloatSignAgreesWithItself) {
  TrainConfig cfg = int8_config(*dir_, "float", "elastic", 1);
  cfg.zo_sign = ZoSign::kFloat;
  cfg.sign_agreement = true;
  cfg.epochs = 1;
  Trainer(cfg).run();
  EXPECT_EQ(last_metrics(dir_->file("float"))["sign_agreement"].get<double>(), 1.0);
}

TEST_F(Int8Training, FullZoRunsForwardOnly) {
  TrainConfig cfg = int8_config(*dir_, "zo", "zo", 0);
  cfg.epochs = 1;
  Trainer t(cfg);
  t.run();
  const json m = last_metrics(dir_->file("zo"));
  EXPECT_EQ(m["backward_passes"].get<int64_t>(), 0);
  EXPECT_EQ(t.arena().bytes(Bucket::kGradients), 0u);
  EXPECT_EQ(t.arena().total_bytes(), t.plan().total());
}

// zo_layer_scale cyclic in integers: a step moves one body layer, the first at step 0, where
// plain ZO moves them all.
TEST_F(Int8Training, CyclicZoMovesOneBodyLayerPerStep) {
  for (bool cyclic : {false, true}) {
    TrainConfig cfg = int8_config(*dir_, cyclic ? "cyclic" : "plain", "zo", 0);
    cfg.epochs = 1;
    cfg.train_limit = 32;  // one step
    // Eq. 12's whole-unit losses tie often; a tie moves nothing, which is not what is tested.
    cfg.loss_frac_bits = 8;
    if (cyclic) cfg.zo_layer_scale = zo::LayerScale::kCyclic;
    Trainer t(cfg);
    std::vector<std::vector<int8_t>> before;
    for (const QWeight& w : t.int8_network()->weights())
      before.emplace_back(w.value.data, w.value.data + w.value.numel());
    t.run();
    EXPECT_EQ(t.state().forward_passes, 2);
    int moved = 0, first = -1;
    const std::vector<QWeight>& after = t.int8_network()->weights();
    for (size_t k = 0; k < after.size(); ++k)
      if (before[k] !=
          std::vector<int8_t>(after[k].value.data, after[k].value.data + after[k].value.numel())) {
        ++moved;
        if (first < 0) first = after[k].layer;
      }
    if (cyclic) {
      EXPECT_EQ(moved, 1);
      EXPECT_EQ(first, after[0].layer);
    } else {
      EXPECT_EQ(moved, static_cast<int>(after.size()));
    }
  }
}

TEST_F(Int8Training, ResumeIsBitIdentical) {
  TrainConfig cfg = int8_config(*dir_, "ref", "elastic", 2);
  Trainer(cfg).run();
  expect_resume_matches(int8_config(*dir_, "part", "elastic", 2), cfg.out);
}

// The integer layers split their row blocks over the thread pool: the same run on 1 and 3
// threads ends with the same weights (Full BP: forward, input gradients and weight gradients).
TEST_F(Int8Training, ResultsDoNotDependOnThreadCount) {
  for (int threads : {1, 3}) {
    TrainConfig cfg = int8_config(*dir_, "threads" + std::to_string(threads), "bp", 0);
    cfg.epochs = 1;
    cfg.threads = threads;
    Trainer(cfg).run();
  }
  expect_same_checkpoints(dir_->file("threads1"), dir_->file("threads3"));
  EXPECT_EQ(last_metrics(dir_->file("threads1"))["train_loss"],
            last_metrics(dir_->file("threads3"))["train_loss"]);
}

// Fine-tuning starts: an f32 checkpoint initializes an f32 run as it is and an int8 run quantized;
// a checkpoint of another model is refused.
TEST_F(Int8Training, InitLoadsACheckpointsParameters) {
  TrainConfig f32 = int8_config(*dir_, "pre", "bp", 0);
  f32.precision = Precision::kF32;
  f32.epochs = 1;
  Trainer(f32).run();
  const Checkpoint ckpt = read_checkpoint(f32.out + "/checkpoint.bin");

  TrainConfig again = f32;
  again.out = dir_->file("again");
  again.seed = 99;
  again.init = f32.out + "/checkpoint.bin";
  Trainer f32_init(again);
  for (const ParamRef& p : f32_init.network().params()) {
    const Tensor want = ckpt.file.get("param/" + p.name, p.value.shape(), ckpt.path);
    ASSERT_EQ(std::vector<float>(p.value.data(), p.value.data() + p.value.numel()),
              std::vector<float>(want.data(), want.data() + want.numel()))
        << p.name;
  }

  TrainConfig q = int8_config(*dir_, "q", "elastic", 2);
  q.init = again.init;
  Trainer int8_init(q);
  for (const QWeight& w : int8_init.int8_network()->weights()) {
    const Tensor t =
        ckpt.file.get("param/" + std::to_string(w.layer) + ".weight", w.value.shape, ckpt.path);
    std::vector<int8_t> want(static_cast<size_t>(t.numel()));
    EXPECT_EQ(w.value.exp, quantize(t.data(), t.numel(), want.data()));
    ASSERT_EQ(std::vector<int8_t>(w.value.data, w.value.data + w.value.numel()), want);
  }

  TrainConfig other = int8_config(*dir_, "other", "elastic", 2);
  other.model = "mlp";
  other.init = again.init;
  EXPECT_THROW(Trainer{other}, InputError);
}

// ema_decay on int8: the steps are those of the run without it; the average is an int32 mean of
// the mantissas with 16 fraction bits, moved by a shift; evaluation, a checkpoint's evaluation
// and --init read it rounded back to mantissas; a resumed run continues it exactly.
TEST_F(Int8Training, WeightAverageIsIntegerAndChangesOnlyEvaluation) {
  const TrainConfig plain = int8_config(*dir_, "avg-plain", "elastic", 2);
  Trainer(plain).run();
  TrainConfig cfg = int8_config(*dir_, "avg", "elastic", 2);
  cfg.ema_decay = 0.99;
  Trainer run(cfg);
  run.run();
  EXPECT_EQ(run.arena().total_bytes(), run.plan().total());
  EXPECT_GT(run.plan().bytes(Bucket::kOptimizer), Trainer(plain).plan().bytes(Bucket::kOptimizer));
  std::ifstream with_in(cfg.out + "/metrics.jsonl"), without_in(plain.out + "/metrics.jsonl");
  std::string with, without;
  int epochs = 0;
  while (std::getline(with_in, with) && std::getline(without_in, without)) {
    EXPECT_EQ(json::parse(with)["train_loss"], json::parse(without)["train_loss"]);
    ++epochs;
  }
  EXPECT_EQ(epochs, cfg.epochs);
  const Checkpoint ckpt = read_checkpoint(cfg.out + "/checkpoint.bin");
  const Checkpoint base = read_checkpoint(plain.out + "/checkpoint.bin");
  for (const auto& [name, t] : base.file.tensors)
    if (name.rfind("qweight/", 0) == 0) {
      EXPECT_TRUE(
          std::equal(t.data(), t.data() + t.numel(), ckpt.file.get(name, t.shape(), "").data()))
          << name;
    }
  EXPECT_EQ(evaluate_checkpoint(ckpt, cfg.data, 32, 1), last_metrics(cfg.out)["test_acc"]);

  TrainConfig part = cfg;
  part.out = dir_->file("avg-part");
  expect_resume_matches(part, cfg.out);

  // The average recomputed step by step (decay 0.75: shifts 0, 1, then 2 = -log2(1 - 0.75)),
  // with the default warm-up and a short one (3: shift 1 from the first step, 2 from the fifth).
  for (const int warmup : {10, 3}) {
    SCOPED_TRACE("ema_warmup " + std::to_string(warmup));
    TrainConfig s = cfg;
    s.out = dir_->file("avg-steps" + std::to_string(warmup));
    s.ema_decay = 0.75;
    s.ema_warmup = warmup;
    Trainer stepped(s);
    auto batches = stepped.data().batches(Split::kTrain, s.batch, false, 0);
    std::vector<std::vector<int32_t>> average;
    for (const ParamView& p : stepped.parameters()) {
      const auto* m = static_cast<const int8_t*>(p.data);
      average.emplace_back(m, m + p.shape.numel());
      for (int32_t& a : average.back()) a *= 65536;
    }
    for (int64_t t = 1; t <= 30; ++t) {
      stepped.step(*batches, t / 22);
      const int shift = std::min(
          2,
          static_cast<int>(std::bit_width(static_cast<uint64_t>((warmup + t) / (warmup - 1)))) - 1);
      const std::vector<ParamView> params = stepped.parameters();
      for (size_t i = 0; i < params.size(); ++i)
        for (size_t j = 0; j < average[i].size(); ++j)
          average[i][j] +=
              (static_cast<const int8_t*>(params[i].data)[j] * 65536 - average[i][j]) >> shift;
    }
    const Checkpoint after = stepped.checkpoint();
    const TensorFile evaluated = with_averages(after.file);
    const std::vector<ParamView> params = stepped.parameters();
    int differ = 0;
    for (size_t i = 0; i < params.size(); ++i) {
      const Tensor& t = after.file.get("ema/" + params[i].name, params[i].shape, "in memory");
      const Tensor& m =
          evaluated.get("qweight/" + std::to_string(std::atoi(params[i].name.c_str())),
                        params[i].shape, "in memory");
      for (size_t j = 0; j < average[i].size(); ++j) {
        ASSERT_EQ(t[static_cast<int64_t>(j)] * 65536, static_cast<float>(average[i][j]))
            << params[i].name;
        const int32_t rounded = std::clamp((average[i][j] + 32768) >> 16, -127, 127);
        ASSERT_EQ(m[static_cast<int64_t>(j)], static_cast<float>(rounded)) << params[i].name;
        differ += rounded != static_cast<const int8_t*>(params[i].data)[j];
      }
    }
    EXPECT_GT(differ, 0);  // the average is not the weights
  }

  // --init starts from the rounded average.
  TrainConfig init = int8_config(*dir_, "avg-init", "elastic", 2);
  init.init = cfg.out + "/checkpoint.bin";
  Trainer from(init);
  const TensorFile averaged = with_averages(ckpt.file);
  for (const QWeight& w : from.int8_network()->weights()) {
    const Tensor& t = averaged.get("qweight/" + std::to_string(w.layer), w.value.shape, "");
    EXPECT_EQ(std::vector<float>(t.data(), t.data() + t.numel()),
              std::vector<float>(w.value.data, w.value.data + w.value.numel()));
  }
}

TEST_F(Int8Training, RejectsOptionsWithoutAnIntegerMeaning) {
  TrainConfig cfg = int8_config(*dir_, "bad", "elastic", 2);
  cfg.estimator = zo::Estimator::kForward;
  EXPECT_THROW(
      {
        try {
          validate(cfg);
        } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find("estimator"), std::string::npos);
          throw;
        }
      },
      InputError);
  cfg = int8_config(*dir_, "bad", "elastic", 2);
  cfg.int_eps = 0;
  EXPECT_THROW(validate(cfg), InputError);
  cfg = int8_config(*dir_, "bad", "elastic", 2);
  cfg.bp_bits = "5,3:2.5";
  EXPECT_THROW(validate(cfg), InputError);
  cfg = int8_config(*dir_, "bad", "elastic", 2);
  cfg.model = "mlp";
  // An unknown precision cannot be set: the config's readers refuse its name.
  EXPECT_THROW(config_from_json(R"({"precision": "int9"})", "test"), InputError);
}

// Integer PointNet with integer batch norm: it learns the stand-in, its running statistics are
// averaged with the weights fixed before each evaluation (bn_stats_batches forward passes,
// counted) and kept in the checkpoint, and a run is the same on any thread count and when
// resumed, for Full BP and for ElasticZO (batch norm in the perturbed body).
class Int8PointNet : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!test::have_hdf5()) return;
    StandinOptions o;
    o.train_per_class = 20, o.test_per_class = 8, o.points = 64;
    write_modelnet40_standin(dir_->file("clouds"), o);
  }
  void SetUp() override { ZT_REQUIRE_HDF5(); }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static TrainConfig config(const std::string& out, Method method) {
    TrainConfig cfg;
    cfg.model = "pointnet";
    cfg.precision = Precision::kInt8;
    cfg.method = method;
    cfg.bp_layers = 3;
    cfg.data = dir_->file("clouds");
    cfg.out = dir_->file(out);
    cfg.points = 32;
    cfg.batch = 16;
    cfg.val_size = 20;
    cfg.epochs = 2;
    cfg.seed = 5;
    cfg.bp_bits = "3";
    cfg.bn_stats_batches = 4;
    return cfg;
  }
  static test::TempDir* dir_;
};
test::TempDir* Int8PointNet::dir_ = new test::TempDir;

TEST_F(Int8PointNet, FullBpLearnsWithAveragedStatisticsInTheCheckpoint) {
  TrainConfig cfg = config("bp", Method::kBp);
  cfg.epochs = 6;
  Trainer(cfg).run();
  const json m = last_metrics(cfg.out);
  EXPECT_GE(m["test_acc"].get<double>(), 0.5);  // 10 classes; measured 0.71
  const int64_t steps = (200 - 20 + 15) / 16;
  EXPECT_EQ(m["forward_passes"].get<int64_t>(), 6 * (steps + 4));
  EXPECT_EQ(m["backward_passes"].get<int64_t>(), 6 * steps);
  const Checkpoint ckpt = read_checkpoint(cfg.out + "/checkpoint.bin");
  const Tensor* stats = ckpt.file.find("qstate/1");  // the batch norm after the first convolution
  ASSERT_NE(stats, nullptr);
  EXPECT_EQ((*stats)[1], 4.0f);  // averaged over the 4 batches since its reset
}

TEST_F(Int8PointNet, SameForAnyThreadCountAndResumesExactly) {
  for (Method method : {Method::kBp, Method::kElastic}) {
    const std::string name = method == Method::kBp ? "bp" : "elastic";
    TrainConfig one = config(name + "1", method), two = config(name + "2", method);
    two.threads = 2;
    Trainer(one).run();
    Trainer(two).run();
    expect_same_checkpoints(one.out, two.out);
    SCOPED_TRACE(name);
    expect_resume_matches(config(name + "p", method), one.out);
  }
}

// Batch norm dividing by the deviation in fixed point reaches the layers (another run than the
// power of two's), learns, and evaluates from its checkpoint as it did in training.
TEST_F(Int8PointNet, FixedNormDivisorLearnsAndEvaluatesFromItsCheckpoint) {
  const TrainConfig plain = config("bp-pow2", Method::kBp);
  Trainer(plain).run();
  TrainConfig cfg = config("bp-fixed", Method::kBp);
  cfg.int_bn_divisor = BnDivisor::kFixed;
  cfg.epochs = 6;
  Trainer(cfg).run();
  const json m = last_metrics(cfg.out);
  EXPECT_GE(m["test_acc"].get<double>(), 0.5);  // 10 classes
  const json first = metrics_at(cfg.out, 0), first_plain = metrics_at(plain.out, 0);
  EXPECT_NE(first["train_loss"], first_plain["train_loss"]);
  const Checkpoint ckpt = read_checkpoint(cfg.out + "/checkpoint.bin");
  EXPECT_EQ(evaluate_checkpoint(ckpt, cfg.data, 16, 1), m["test_acc"]);
}

// With a weight average, precise batch norm measures the statistics of the averaged weights,
// the model evaluated, between the epoch's steps and its evaluation: training is unchanged.
TEST_F(Int8PointNet, WeightAverageHasTheStatisticsOfItsOwnPasses) {
  const TrainConfig plain = config("avg-plain", Method::kElastic);
  Trainer(plain).run();
  TrainConfig cfg = config("avg", Method::kElastic);
  cfg.ema_decay = 0.9;
  Trainer(cfg).run();
  EXPECT_EQ(last_metrics(cfg.out)["train_loss"], last_metrics(plain.out)["train_loss"]);
  const Checkpoint ckpt = read_checkpoint(cfg.out + "/checkpoint.bin");
  const Checkpoint base = read_checkpoint(plain.out + "/checkpoint.bin");
  for (const auto& [name, t] : base.file.tensors) {
    const Tensor& mine = ckpt.file.get(name, t.shape(), "");
    const bool same = std::equal(t.data(), t.data() + t.numel(), mine.data());
    if (name.rfind("qweight/", 0) == 0) {
      EXPECT_TRUE(same) << name;
    } else if (name == "qstate/1") {
      EXPECT_FALSE(same) << name;
    }
  }
  EXPECT_EQ(evaluate_checkpoint(ckpt, cfg.data, 16, 1), last_metrics(cfg.out)["test_acc"]);
}

}  // namespace
}  // namespace zotrain
