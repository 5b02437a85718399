#include "train/step_bench.h"

#include <gtest/gtest.h>

namespace zotrain {
namespace {

constexpr int64_t kBatch = 8;
// LeNet-5's multiply-adds per example (tests/models/model_test.cpp): all layers, and the
// ZO-Feat-Cls1 head (fc2, fc3).
constexpr double kLeNetMacs = 117600 + 240000 + 48000 + 10080 + 840;
constexpr double kHeadMacs = 10080 + 840;

TrainConfig lenet(const char* method, const char* precision = "f32") {
  TrainConfig cfg;
  cfg.method = parse_name<Method>("method", method);
  cfg.precision = parse_name<Precision>("precision", precision);
  cfg.batch = kBatch;
  cfg.q = 1;
  return cfg;
}

// The operations of one step of `cfg`, counted by StepBench.
double ops_of_one_step(const TrainConfig& cfg) {
  StepBench b(cfg, Shape{1, 28, 28}, 10);
  EXPECT_EQ(b.rows(), kBatch);
  EXPECT_EQ(b.step_ops(), 0.0);
  b.step();
  return b.step_ops();
}

TEST(StepBench, GeneratedDataHasTheShapeAndNoValidationSet) {
  const DataSplits d = generated_data(Shape{3, 4, 5}, 7, 6);
  EXPECT_EQ(d.train.pixels.size(), 6u * 60);
  ASSERT_EQ(d.train.labels.size(), 6u);
  for (uint8_t l : d.train.labels) EXPECT_LT(l, 7);
  EXPECT_TRUE(d.val.labels.empty());
  EXPECT_EQ(d.test.labels, d.train.labels);
}

TEST(StepBench, CountsTwoOperationsPerMultiplyAddAndBackwardAsTwoForwards) {
  const double forward = 2 * kLeNetMacs * kBatch;
  EXPECT_EQ(StepBench(lenet("zo"), Shape{1, 28, 28}, 10).forward_ops(), forward);
  // Full BP: one forward pass and one backward pass of the whole network.
  EXPECT_EQ(ops_of_one_step(lenet("bp")), 3 * forward);
  // Full ZO, q = 1, SPSA: two forward passes.
  EXPECT_EQ(ops_of_one_step(lenet("zo")), 2 * forward);
  // ElasticZO: two forward passes, each followed by a backward pass of the head.
  const double elastic = 2 * forward + 2 * 2 * (2 * kHeadMacs * kBatch);
  EXPECT_EQ(ops_of_one_step(lenet("elastic")), elastic);
  // The integer steps count the same work.
  EXPECT_EQ(ops_of_one_step(lenet("elastic", "int8")), elastic);
  EXPECT_EQ(ops_of_one_step(lenet("zo", "int8-npu")), 2 * forward);
}

TEST(StepBench, ForwardRunsEveryPrecisionWithoutCountingPasses) {
  for (const char* precision : {"f32", "int8", "int8-npu"}) {
    StepBench b(lenet("zo", precision), Shape{1, 28, 28}, 10);
    b.forward();
    EXPECT_EQ(b.trainer().state().forward_passes, 0) << precision;
  }
}

TEST(StepBench, EveryPrecisionsPlanIsItsArenaOnEveryModelFamily) {
  for (const char* model : {"lenet5", "mobilenetv2:0.35", "resnet18:0.25"})
    for (const char* precision : {"f32", "int8-npu"}) {
      TrainConfig cfg = lenet("zo", precision);
      cfg.model = model;
      cfg.threads = 2;
      StepBench b(cfg, Shape{1, 28, 28}, 10);
      EXPECT_EQ(b.trainer().arena().total_bytes(), b.trainer().plan().total())
          << model << " " << precision;
    }
}

}  // namespace
}  // namespace zotrain
