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

}  // namespace
}  // namespace zotrain
