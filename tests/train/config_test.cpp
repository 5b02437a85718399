#include "zotrain/train/config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zotrain/core/error.h"

namespace zotrain {
namespace {

// validate refuses `bad` with an InputError naming every word of `words` (the key first).
void expect_refused(const TrainConfig& bad, const std::vector<std::string>& words) {
  try {
    validate(bad);
    ADD_FAILURE() << "accepted a config with bad " << words[0];
  } catch (const InputError& e) {
    for (const std::string& w : words)
      EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
  }
}

// expect_refused for `c` with one field set to `value`.
template <class T, class V>
void expect_refused_with(TrainConfig c, T TrainConfig::*field, V value,
                         const std::vector<std::string>& words) {
  SCOPED_TRACE(::testing::PrintToString(value));
  c.*field = value;
  expect_refused(c, words);
}

TEST(Config, JsonRoundTripsEveryKey) {
  TrainConfig c;
  c.model = "mlp:5";
  c.lr = 0.125;
  c.seed = 123456789012ull;
  c.train_limit = 77;
  TrainConfig d = config_from_json(config_to_json(c), "test");
  EXPECT_EQ(config_to_json(c), config_to_json(d));
  EXPECT_EQ(d.seed, 123456789012ull);
}

// A checkpoint's stored config is read like a config file: an integer its field cannot hold
// is refused, not narrowed (4294967297 epochs became 1).
TEST(Config, JsonIntegersOutOfTheirFieldsRangeAreRefused) {
  for (const char* text : {R"({"epochs": 4294967297})", R"({"epochs": -4294967295})",
                           R"({"seed": -1})", R"({"threads": 18446744073709551615})"}) {
    SCOPED_TRACE(text);
    EXPECT_THROW(config_from_json(text, "ckpt"), InputError);
  }
  EXPECT_EQ(config_from_json(R"({"epochs": 7, "seed": 18446744073709551})", "ckpt").epochs, 7);
}

// A schedule's trailing comma is refused: getline left "0.5," as "0.5" (issue 22, defect 12).
TEST(Config, SchedulesWithATrailingCommaAreRefused) {
  EXPECT_THROW(parse_sparsity("0.5,"), InputError);
  EXPECT_THROW(parse_sparsity("0.33,20:0.5,"), InputError);
  EXPECT_THROW(parse_bp_bits("5,10:4,"), InputError);
  EXPECT_EQ(parse_sparsity("0.33,20:0.5").size(), 2u);
}

// The integer move fraction: a schedule of fractions in (0, 1], below 1 only for the integer
// ZO step.
TEST(Config, ZoMoveIsAFractionForTheIntegerZoStepOnly) {
  EXPECT_EQ(parse_zo_move("1,50:0.5,75:0.25").size(), 3u);
  for (const char* bad : {"0", "1.5", "-0.5", "0.5,"}) EXPECT_THROW(parse_zo_move(bad), InputError);
  TrainConfig c;
  c.precision = Precision::kInt8;
  c.zo_move = "1,50:0.5";
  EXPECT_NO_THROW(validate(c));
  for (const auto& [precision, method] :
       {std::pair{Precision::kF32, Method::kElastic}, std::pair{Precision::kInt8, Method::kBp}}) {
    TrainConfig bad = c;
    bad.precision = precision, bad.method = method;
    try {
      validate(bad);
      ADD_FAILURE() << "accepted zo_move for a step that is not the integer ZO step";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("zo_move"), std::string::npos) << e.what();
    }
  }
}

// recompute_blocks is the f32 network's.
TEST(Config, RecomputeBlocksIsAnF32Option) {
  for (Precision p : {Precision::kInt8, Precision::kInt8Npu}) {
    SCOPED_TRACE(name_of(p));
    TrainConfig c;
    c.precision = p;
    c.recompute_blocks = true;
    expect_refused(c, {"recompute_blocks"});
  }
}

TEST(Config, EmaDecayIsInZeroToOne) {
  for (double bad : {-0.1, 1.0, 1.5}) {
    SCOPED_TRACE(bad);
    TrainConfig c;
    c.ema_decay = bad;
    expect_refused(c, {"ema_decay"});
  }
  // The warm-up's (1 + t) / (w + t) needs w >= 2 to be a decay below 1 that grows.
  for (int bad : {1, 0, -3}) {
    SCOPED_TRACE(bad);
    TrainConfig c;
    c.ema_warmup = bad;
    expect_refused(c, {"ema_warmup", ">= 2"});
  }
  // f32 and NITI int8 average their weights; the NPU's program is quantized once per run.
  TrainConfig c;
  c.ema_decay = 0.999;
  c.method = Method::kZo;
  for (Precision p : {Precision::kF32, Precision::kInt8}) {
    c.precision = p;
    EXPECT_NO_THROW(validate(c)) << name_of(p);
  }
  c.precision = Precision::kInt8Npu;
  try {
    validate(c);
    ADD_FAILURE() << "accepted ema_decay with int8-npu";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ema_decay"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("int8-npu"), std::string::npos) << e.what();
  }
}

// The step grows with a q schedule's q, from zo_lr at q0; NITI's integer steps have no zo_lr.
TEST(Config, QLrExponentIsInZeroToOneForAQScheduleWithAZoLr) {
  TrainConfig c;
  c.method = Method::kZo;
  c.q_schedule = QSchedule::kQScheduler;
  c.val_size = 100;
  c.q_lr_exponent = 0.5;
  for (Precision p : {Precision::kF32, Precision::kInt8Npu}) {
    c.precision = p;
    EXPECT_NO_THROW(validate(c)) << name_of(p);
  }
  for (double bad : {-0.1, 1.5})
    expect_refused_with(c, &TrainConfig::q_lr_exponent, bad, {"q_lr_exponent", "[0, 1]"});
  expect_refused_with(c, &TrainConfig::q_schedule, QSchedule::kFixed, {"q_lr_exponent", "fixed"});
  expect_refused_with(c, &TrainConfig::precision, Precision::kInt8, {"q_lr_exponent", "int8"});
}

TEST(Config, ZoCyclePowerIsInMinusOneToOneForCyclicF32) {
  TrainConfig c;
  c.method = Method::kZo;
  c.zo_layer_scale = zo::LayerScale::kCyclic;
  c.zo_cycle_power = 0.5;
  EXPECT_NO_THROW(validate(c));
  for (double bad : {-1.5, 1.5})
    expect_refused_with(c, &TrainConfig::zo_cycle_power, bad, {"zo_cycle_power", "[-1, 1]"});
  expect_refused_with(c, &TrainConfig::zo_layer_scale, zo::LayerScale::kDim,
                      {"zo_cycle_power", "cyclic"});
  expect_refused_with(c, &TrainConfig::precision, Precision::kInt8, {"zo_cycle_power", "f32"});
}

TEST(Config, ZoCycleScalePowerIsInMinusOneToOneForCyclicF32) {
  TrainConfig c;
  c.method = Method::kZo;
  c.zo_layer_scale = zo::LayerScale::kCyclic;
  c.zo_cycle_scale_power = -0.5;
  EXPECT_NO_THROW(validate(c));
  for (double bad : {-1.5, 1.5})
    expect_refused_with(c, &TrainConfig::zo_cycle_scale_power, bad,
                        {"zo_cycle_scale_power", "[-1, 1]"});
  expect_refused_with(c, &TrainConfig::zo_layer_scale, zo::LayerScale::kRms,
                      {"zo_cycle_scale_power", "cyclic"});
  expect_refused_with(c, &TrainConfig::precision, Precision::kInt8,
                      {"zo_cycle_scale_power", "f32"});
}

TEST(Config, ZoActivityNeedsCyclicSpsaF32OnOneLane) {
  TrainConfig c;
  c.zo_layer_scale = zo::LayerScale::kCyclic;
  c.zo_activity = true;
  EXPECT_NO_THROW(validate(c));
  expect_refused_with(c, &TrainConfig::zo_layer_scale, zo::LayerScale::kNone,
                      {"zo_activity", "cyclic"});
  expect_refused_with(c, &TrainConfig::estimator, zo::Estimator::kForward, {"zo_activity", "spsa"});
  c.threads = 2;
  expect_refused_with(c, &TrainConfig::zo_lanes, 2, {"zo_activity", "zo_lanes 1"});
  // Distributed: in Full ZO only (no head to backprop from the ranks' passes).
  for (Distributed mode : {Distributed::kData, Distributed::kDirections}) {
    expect_refused_with(c, &TrainConfig::distributed, mode, {"zo_activity", "method zo"});
    TrainConfig full = c;
    full.method = Method::kZo;
    full.distributed = mode;
    EXPECT_NO_THROW(validate(full));
  }
  expect_refused_with(c, &TrainConfig::precision, Precision::kInt8, {"zo_activity", "f32"});
  expect_refused_with(c, &TrainConfig::zo_activity_lr, 0.0, {"zo_activity_lr", "positive"});
  for (double bad : {-0.5, 1.5})
    expect_refused_with(c, &TrainConfig::zo_activity_scale_power, bad,
                        {"zo_activity_scale_power", "[0, 1]"});
  // Without zo_activity its step keys rest: `--method zo --zo-activity 0` turns the default
  // output turns off alone, leaving the defaults' zo_activity_scale_power 1.
  c.zo_activity = false;
  c.zo_activity_scale_power = 1.0;
  EXPECT_NO_THROW(validate(c));
}

TEST(Config, ChoicesAreEnumsWrittenByNameAndFlagsAreBooleans) {
  TrainConfig c;
  c.method = Method::kZo;
  c.precision = Precision::kInt8Npu;
  c.perturbation = zo::Distribution::kRademacher;
  c.q_schedule = QSchedule::kBudget;
  c.cache_features = true;
  const nlohmann::json j = nlohmann::json::parse(config_to_json(c));
  EXPECT_EQ(j["method"], "zo");
  EXPECT_EQ(j["precision"], "int8-npu");
  EXPECT_EQ(j["perturbation"], "rademacher");
  EXPECT_EQ(j["q_schedule"], "budget");
  EXPECT_EQ(j["cache_features"], true);
  const TrainConfig d = config_from_json(j.dump(), "test");
  EXPECT_EQ(d.precision, Precision::kInt8Npu);
  EXPECT_EQ(d.q_schedule, QSchedule::kBudget);
  // Checkpoints written before the flags were booleans hold 0 and 1.
  const TrainConfig old = config_from_json(
      R"({"cache_features": 1, "sign_agreement": 0, "npu_recalibrate": 1})", "old");
  EXPECT_TRUE(old.cache_features);
  EXPECT_FALSE(old.sign_agreement);
  EXPECT_TRUE(old.npu_recalibrate);
  for (const char* bad : {R"({"cache_features": 2})", R"({"method": 1})"})
    EXPECT_THROW(config_from_json(bad, "x.json"), InputError) << bad;
  try {
    config_from_json(R"({"head_grad": "noisy"})", "x.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("head_grad"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("perturbed or clean"), std::string::npos) << e.what();
  }
}

TEST(Config, UnknownKeysAndWrongTypesNameTheKey) {
  try {
    config_from_json(R"({"lr": 0.1, "learning_rate": 0.1})", "x.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("learning_rate"), std::string::npos);
  }
  try {
    config_from_json(R"({"epochs": "many"})", "x.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("epochs"), std::string::npos);
  }
}

TEST(Config, ValidateNamesTheBadKey) {
  TrainConfig c;
  c.momentum = 1.5;
  try {
    validate(c);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("momentum"), std::string::npos);
  }
}

// Perturbation lanes need a thread each and perturbed f32 passes.
TEST(Config, ZoLanesNeedThreadsAndPerturbedFloatPasses) {
  TrainConfig c;
  c.method = Method::kZo;
  c.threads = 2;
  c.zo_lanes = 2;
  EXPECT_NO_THROW(validate(c));
  auto rejected = [](TrainConfig bad, const std::string& expected) {
    try {
      validate(bad);
      ADD_FAILURE() << "accepted: " << expected;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("zo_lanes"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  TrainConfig more = c;
  more.zo_lanes = 3;
  rejected(more, "[1, threads]");
  TrainConfig bp = c;
  bp.method = Method::kBp;
  rejected(bp, "precision is f32 and method zo or elastic");
  TrainConfig int8 = c;
  int8.precision = Precision::kInt8;
  rejected(int8, "precision is f32 and method zo or elastic");
}

// The f32 estimator options are refused by name for the integer precisions, whose updates are
// rules of their own; their names parse.
TEST(Config, F32EstimatorOptionsAreRefusedForIntegerPrecisions) {
  using Option = void (*)(TrainConfig&);
  const std::vector<std::pair<std::string, Option>> options = {
      {"zo_optimizer", [](TrainConfig& c) { c.zo_optimizer = zo::Optimizer::kAdam; }},
      {"zo_layer_scale", [](TrainConfig& c) { c.zo_layer_scale = zo::LayerScale::kRms; }},
      {"zo_normalize", [](TrainConfig& c) { c.zo_normalize = true; }},
      {"zo_mask", [](TrainConfig& c) { c.zo_mask = zo::Mask::kMagnitude; }},
  };
  for (const auto& [key, set] : options) {
    TrainConfig c;
    set(c);
    EXPECT_NO_THROW(validate(c)) << key;
    for (Precision p : {Precision::kInt8, Precision::kInt8Npu}) {
      TrainConfig bad = c;
      bad.precision = p;
      bad.method = Method::kZo;
      try {
        validate(bad);
        ADD_FAILURE() << key << " accepted with " << name_of(p);
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("unless precision is f32"), std::string::npos);
      }
    }
  }
  const TrainConfig d = config_from_json(
      R"({"zo_optimizer": "adam", "zo_layer_scale": "dim", "zo_mask": "magnitude"})", "x.json");
  EXPECT_EQ(d.zo_optimizer, zo::Optimizer::kAdam);
  EXPECT_EQ(d.zo_layer_scale, zo::LayerScale::kDim);
  EXPECT_EQ(d.zo_mask, zo::Mask::kMagnitude);
}

}  // namespace
}  // namespace zotrain
