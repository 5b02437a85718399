// The host's side of the device program (device_run.h): a packed run holds the first epoch as
// the int8 engine fills it, and the weights check finds every difference and refuses a file
// that is not one.
#include "zotrain/train/device_run.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "synthetic_data.h"
#include "test_util.h"
#include "train/device_run_format.h"
#include "zotrain/core/error.h"
#include "zotrain/nn/int8/qnetwork.h"
#include "zotrain/train/trainer.h"

namespace zotrain {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// The weights file the device program writes (device/m55/main.cpp), from a network here.
std::string device_weights(const QNetwork& net) {
  std::string out;
  device::put_weights(net,
                      [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); });
  return out;
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(DeviceRun, PacksTheEpochAndComparesWeightsValueByValue) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 96, 32, 1);
  TrainConfig cfg;
  cfg.model = "lenet5";
  cfg.precision = Precision::kInt8;
  cfg.method = Method::kElastic;
  cfg.bp_layers = 1;
  cfg.data = dir.file("data");
  cfg.out = dir.file("run");
  cfg.batch = 16;
  cfg.val_size = 32;
  cfg.epochs = 1;
  cfg.int_eps = 7;
  Trainer trainer(cfg);
  const DeviceRunSummary s = trainer.write_device_run(dir.file("run.ztd"));
  EXPECT_EQ(s.steps, 4);  // 96 - 32 validation examples in batches of 16
  EXPECT_EQ(s.examples, 64);
  const std::string run = read_all(dir.file("run.ztd"));
  ASSERT_EQ(static_cast<int64_t>(run.size()), s.bytes);
  device::RunHeader h;
  std::memcpy(&h, run.data(), sizeof h);
  EXPECT_EQ(std::string(h.model), "lenet5");
  EXPECT_EQ(h.batch, 16);
  EXPECT_EQ(h.steps, 4);
  EXPECT_EQ(h.head, trainer.head());
  EXPECT_EQ(h.eps, 7);
  EXPECT_EQ(h.fixed_norm, 0);
  EXPECT_EQ(s.bytes, static_cast<int64_t>(sizeof h) + 4 * (4 + 16 + 16 * 28 * 28));
  TrainConfig fixed = cfg;  // batch norm's divisor in fixed point travels in the header
  fixed.int_bn_divisor = BnDivisor::kFixed;
  Trainer(fixed).write_device_run(dir.file("fixed.ztd"));
  std::memcpy(&h, read_all(dir.file("fixed.ztd")).data(), sizeof h);
  EXPECT_EQ(h.fixed_norm, 1);

  // The trained network's weights against its checkpoint: equal; then one mantissa off.
  trainer.run();
  const std::string ckpt = dir.file("run") + "/checkpoint.bin";
  std::string weights = device_weights(*trainer.int8_network());
  write(dir.file("same.bin"), weights);
  int64_t values = 0;
  EXPECT_TRUE(compare_device_weights(dir.file("same.bin"), ckpt, &values).empty());
  EXPECT_EQ(values, 150 + 2400 + 48000 + 10080 + 840 + 5);  // mantissas and exponents
  weights[8 + 4 + 4 + 16 + 3] ^= 1;                         // the 4th mantissa of the first weight
  write(dir.file("off.bin"), weights);
  const std::vector<std::string> diffs = compare_device_weights(dir.file("off.bin"), ckpt);
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_NE(diffs[0].find("qweight/0: 1 of 150 values differ (the first at 3"), std::string::npos)
      << diffs[0];
  write(dir.file("short.bin"), weights.substr(0, 40));
  EXPECT_THROW(compare_device_weights(dir.file("short.bin"), ckpt), InputError);
  write(dir.file("other.bin"), "not a weights file at all");
  EXPECT_THROW(compare_device_weights(dir.file("other.bin"), ckpt), InputError);
}

TEST(DeviceRun, RefusesWhatTheDeviceDoesNotRun) {
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 64, 32, 1);
  TrainConfig cfg;
  cfg.model = "lenet5";
  cfg.data = dir.file("data");
  cfg.out = dir.file("run");
  cfg.batch = 16;
  cfg.val_size = 16;
  // Refused with an error that names the config key.
  const auto expect_refused = [&dir](const TrainConfig& c, const std::string& key) {
    Trainer t(c);
    try {
      t.write_device_run(dir.file("run.ztd"));
      ADD_FAILURE() << "a run the device does not run was packed: " << key;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  expect_refused(cfg, "precision");  // f32
  cfg.precision = Precision::kInt8;
  TrainConfig clean = cfg;
  clean.method = Method::kElastic;
  clean.head_grad = HeadGrad::kClean;  // the device backprops the head from the perturbed passes
  expect_refused(clean, "head_grad");
  cfg.zo_move = "1,5:0.5";  // a partial move from epoch 5: the device moves every weight
  expect_refused(cfg, "zo_move");
}

}  // namespace
}  // namespace zotrain
