// Fine-tuning: --init, --train-layers (a frozen prefix run once per step) and --cache-features
// (run once per example).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "synthetic_data.h"
#include "test_util.h"
#include "zotrain/core/error.h"
#include "zotrain/train/trainer.h"

namespace zotrain {
namespace {

using nlohmann::json;

TrainConfig base_config(const test::TempDir& dir, const std::string& out) {
  TrainConfig cfg;
  cfg.model = "lenet5";
  cfg.data = dir.file("data");
  cfg.out = dir.file(out);
  cfg.epochs = 1;
  cfg.batch = 32;
  cfg.val_size = 60;
  cfg.seed = 3;
  return cfg;
}

// A LeNet-5 trained with BP for two epochs: the checkpoint fine-tuning starts from.
std::string pretrained(const test::TempDir& dir) {
  test::write_synthetic_data(dir.file("data"), 300, 100, 7);
  TrainConfig cfg = base_config(dir, "pre");
  cfg.method = Method::kBp;
  cfg.epochs = 2;
  Trainer(cfg).run();
  return cfg.out + "/checkpoint.bin";
}

std::map<std::string, std::vector<float>> params(const std::string& checkpoint) {
  std::map<std::string, std::vector<float>> out;
  for (const auto& [name, t] : read_checkpoint(checkpoint).file.tensors)
    if (name.rfind("param/", 0) == 0) out[name].assign(t.data(), t.data() + t.numel());
  return out;
}

std::string metrics_without_time(const std::string& out) {
  std::ifstream in(out + "/metrics.jsonl");
  std::string all;
  for (std::string l; std::getline(in, l);) {
    json j = json::parse(l);
    for (const char* k : {"seconds", "peak_rss_bytes", "arena_bytes"}) j.erase(k);
    all += j.dump() + "\n";
  }
  return all;
}

// A run of cfg.epochs stopped after `first` epochs and resumed gives the metrics of `whole`,
// the same config's uninterrupted run.
void expect_resumes_exactly(TrainConfig cfg, int first, const std::string& whole) {
  const int epochs = cfg.epochs;
  cfg.epochs = first;
  Trainer(cfg).run();
  cfg.epochs = epochs;
  Trainer resumed(cfg);
  resumed.resume(read_checkpoint(cfg.out + "/checkpoint.bin"));
  resumed.run();
  EXPECT_EQ(metrics_without_time(whole), metrics_without_time(cfg.out));
}

// Layers before `first` keep the pretrained values, the others moved.
void expect_only_trained_changed(const std::string& before, const std::string& after, int first) {
  const auto a = params(before), b = params(after);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, v] : a) {
    const int layer = std::stoi(name.substr(6));
    if (layer < first) {
      EXPECT_EQ(v, b.at(name)) << name;
    } else if (name.ends_with("weight")) {
      EXPECT_NE(v, b.at(name)) << name;
    }
  }
}

TEST(FineTuning, ZoTrainsOnlyTheLastLayersAndCachingFeaturesChangesNothing) {
  test::TempDir dir;
  const std::string init = pretrained(dir);
  TrainConfig cfg = base_config(dir, "zo");
  cfg.method = Method::kZo;
  cfg.init = init;
  cfg.train_layers = 2;
  cfg.q = 4;
  cfg.perturbation = zo::Distribution::kRademacher;
  cfg.zo_momentum = 0.5;
  Trainer t(cfg);
  const int first = t.first_trained_layer();
  EXPECT_EQ(first, t.network().param_layers().end()[-2]);
  t.run();
  expect_only_trained_changed(init, cfg.out + "/checkpoint.bin", first);

  TrainConfig cached = cfg;
  cached.out = dir.file("zo-cached");
  cached.cache_features = true;
  Trainer(cached).run();
  EXPECT_EQ(params(cfg.out + "/checkpoint.bin"), params(cached.out + "/checkpoint.bin"));
  EXPECT_EQ(metrics_without_time(cfg.out), metrics_without_time(cached.out));
  std::ifstream s(cached.out + "/summary.json");
  const json summary = json::parse(s);
  // (240 + 60 + 100 examples) x the frozen output's floats, and a label each.
  const int64_t numel = t.network().input_shape(first, 1).numel();
  EXPECT_EQ(summary["feature_cache_bytes"].get<int64_t>(), 400 * (numel * 4 + 1));
  EXPECT_EQ(summary["frozen_layers"].get<int>(), first);
}

TEST(FineTuning, BpAndElasticTrainOnlyTheLastLayers) {
  test::TempDir dir;
  const std::string init = pretrained(dir);
  TrainConfig bp = base_config(dir, "bp");
  bp.method = Method::kBp;
  bp.init = init;
  bp.train_layers = 1;
  bp.lr = 0.01;
  Trainer t(bp);
  EXPECT_EQ(t.network().head(), t.first_trained_layer());
  t.run();
  expect_only_trained_changed(init, bp.out + "/checkpoint.bin", t.first_trained_layer());
  std::ifstream s(bp.out + "/summary.json");
  EXPECT_GE(json::parse(s)["final_test_acc"].get<double>(), 0.8);

  TrainConfig elastic = base_config(dir, "elastic");
  elastic.method = Method::kElastic;
  elastic.init = init;
  elastic.train_layers = 3;
  elastic.bp_layers = 1;
  elastic.cache_features = true;
  Trainer e(elastic);
  EXPECT_LT(e.first_trained_layer(), e.network().head());
  e.run();
  expect_only_trained_changed(init, elastic.out + "/checkpoint.bin", e.first_trained_layer());
}

TEST(FineTuning, Int8NpuTrainsMasterWeightsResumesAndCachesIntegerFeatures) {
  test::TempDir dir;
  const std::string init = pretrained(dir);
  TrainConfig cfg = base_config(dir, "npu");
  cfg.method = Method::kZo;
  cfg.precision = Precision::kInt8Npu;
  cfg.init = init;
  cfg.train_layers = 2;
  cfg.q = 4;
  cfg.zo_lr = 1e-3;
  cfg.zo_momentum = 0.5;
  cfg.epochs = 2;
  Trainer t(cfg);
  t.run();
  const Checkpoint ckpt = read_checkpoint(cfg.out + "/checkpoint.bin");
  const Checkpoint pre = read_checkpoint(init);
  int masters = 0;
  for (const ParamRef& p : t.network().params()) {
    const std::string master = "npu_master/" + std::to_string(p.index);
    if (p.layer < t.first_trained_layer() || p.name.ends_with("bias")) {
      EXPECT_TRUE(std::none_of(ckpt.file.tensors.begin(), ckpt.file.tensors.end(),
                               [&](const auto& t) { return t.first == master; }))
          << master;
      continue;
    }
    ++masters;
    const Tensor m = ckpt.file.get(master, p.value.shape(), ckpt.path);
    const Tensor w = pre.file.get("param/" + p.name, p.value.shape(), pre.path);
    EXPECT_FALSE(std::equal(m.data(), m.data() + m.numel(), w.data())) << "master moved";
  }
  EXPECT_EQ(masters, 2);
  // Its trained weights are the program's masters, batch norm folded in: only an int8-npu run
  // can start from them (issue 22, defect 5: an f32 run loaded the weights from before).
  for (Precision p : {Precision::kF32, Precision::kInt8}) {
    TrainConfig from = base_config(dir, "from-npu");
    from.precision = p;
    from.init = cfg.out + "/checkpoint.bin";
    try {
      Trainer{from};
      ADD_FAILURE() << "an int8-npu checkpoint initialized a " << name_of(p) << " run";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("an int8-npu checkpoint cannot initialize"),
                std::string::npos)
          << e.what();
    }
  }
  std::ifstream s(cfg.out + "/summary.json");
  const json summary = json::parse(s);
  EXPECT_GE(summary["final_test_acc"].get<double>(), 0.8);
  EXPECT_GT(summary["npu_bytes"].get<int64_t>(), 0);
  // Every buffer of the program is in the arena, and the plan says so before it is built.
  EXPECT_EQ(summary["arena_bytes"], summary["planned_bytes"]);
  EXPECT_EQ(t.arena().total_bytes(), t.plan().total());
  EXPECT_LE(summary["npu_bytes"].get<int64_t>(), summary["arena_bytes"].get<int64_t>());

  TrainConfig cached = cfg;
  cached.out = dir.file("npu-cached");
  cached.cache_features = true;
  Trainer with_cache(cached);
  EXPECT_EQ(with_cache.arena().total_bytes(), with_cache.plan().total());
  with_cache.run();
  EXPECT_EQ(metrics_without_time(cfg.out), metrics_without_time(cached.out));

  TrainConfig parts = cfg;
  parts.out = dir.file("npu-parts");
  expect_resumes_exactly(parts, 1, cfg.out);

  // A run that recalibrates at every plateau (no gain counts as one: q grows after each
  // epoch) resumes exactly too: its checkpoint keeps the recalibrated scales.
  TrainConfig recal = cfg;
  recal.npu_recalibrate = true;
  recal.q_schedule = QSchedule::kQScheduler;
  recal.q0 = 2;
  recal.q_patience = 1;
  recal.q_tau = 1.0;
  recal.q_max = 8;
  recal.epochs = 3;
  recal.out = dir.file("recal");
  Trainer(recal).run();
  EXPECT_NE(metrics_without_time(recal.out).find("\"recalibrated\":true"), std::string::npos);
  TrainConfig recal_parts = recal;
  recal_parts.out = dir.file("recal-parts");
  expect_resumes_exactly(recal_parts, 2, recal.out);
}

TEST(FineTuning, RejectsInconsistentSettings) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 100, 20, 1);
  TrainConfig cfg = base_config(dir, "x");
  cfg.train_layers = 6;  // LeNet-5 has five layers with parameters
  EXPECT_THROW(Trainer{cfg}, InputError);
  cfg.train_layers = 0;
  cfg.cache_features = true;
  EXPECT_THROW(validate(cfg), InputError);
  cfg.cache_features = false;
  cfg.method = Method::kElastic;
  cfg.train_layers = 1;
  cfg.bp_layers = 2;
  EXPECT_THROW(validate(cfg), InputError);
  cfg.method = Method::kZo;
  cfg.precision = Precision::kInt8;
  EXPECT_THROW(validate(cfg), InputError);
  cfg.precision = Precision::kInt8Npu;
  cfg.method = Method::kBp;
  EXPECT_THROW(validate(cfg), InputError);
}

}  // namespace
}  // namespace zotrain
