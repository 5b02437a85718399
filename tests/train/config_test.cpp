#include "zotrain/train/config.h"

#include <gtest/gtest.h>

#include "zotrain/core/error.h"

namespace zotrain {
namespace {

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
  c.method = "zo";
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
  bp.method = "bp";
  rejected(bp, "precision is f32 and method zo or elastic");
  TrainConfig int8 = c;
  int8.precision = "int8";
  rejected(int8, "precision is f32 and method zo or elastic");
}

}  // namespace
}  // namespace zotrain
