#include "zotrain/train/export.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "models/serialize.h"
#include "nn/npu/npu_network.h"
#include "synthetic_data.h"
#include "test_util.h"
#include "zotrain/core/error.h"
#include "zotrain/models/onnx.h"
#include "zotrain/nn/int8/qnetwork.h"
#include "zotrain/train/trainer.h"

namespace zotrain {
namespace {

// A short run of `precision` on the synthetic images.
TrainConfig run_config(const test::TempDir& dir, const std::string& model, Precision precision) {
  TrainConfig cfg = defaults_for(Method::kZo, precision);
  cfg.model = model;
  cfg.method = Method::kZo;
  cfg.precision = precision;
  cfg.data = dir.file("data");
  cfg.out = dir.file("run");
  cfg.epochs = 1;
  cfg.batch = 16;
  cfg.train_limit = 64;
  cfg.val_size = 16;
  cfg.npu_calibration_batches = 2;
  return cfg;
}

// The logits of an ONNX file's model in evaluation mode, on the rows of x.
std::vector<float> onnx_logits(const std::string& path, const Tensor& x) {
  const OnnxModel m = read_onnx(path);
  const int64_t rows = x.shape()[0];
  Network net(m.spec.item_shape, m.spec.layers);
  Arena arena;
  net.allocate(arena, rows, net.num_layers(), nullptr, 0);
  restore_params(m.params, path, net);
  std::copy(x.data(), x.data() + x.numel(), net.input(rows).data());
  net.set_mode({false, 0, false});
  const Tensor y = net.forward(rows);
  return {y.data(), y.data() + y.numel()};
}

// An int8-npu run's export is its program's float network: the logits of its float reference
// (masters and folded biases), with and without batch norms to fold.
TEST(Export, Int8NpuRunsAsTheirProgramsFloatNetwork) {
  if (!onnx_supported()) GTEST_SKIP() << "built without ONNX (libonnx-dev)";
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 120, 40, 3);
  for (const std::string model : {"lenet5", "mobilenetv2:0.25"}) {
    SCOPED_TRACE(model);
    std::filesystem::remove_all(dir.file("run"));
    Trainer t(run_config(dir, model, Precision::kInt8Npu));
    t.run();
    const std::string out = dir.file(model + ".onnx");
    const std::string said = export_onnx(t.checkpoint(), out);
    EXPECT_NE(said.find("batch norm folded in"), std::string::npos) << said;
    const Tensor x = test::random_uniform(Shape{5, 1, 28, 28}, 7, 0);
    const Tensor want = t.npu_network()->float_forward(x.data(), 5, false);
    const std::vector<float> got = onnx_logits(out, x);
    ASSERT_EQ(static_cast<int64_t>(got.size()), want.numel());
    const auto [lo, hi] = std::minmax_element(want.data(), want.data() + want.numel());
    double worst = 0;
    for (int64_t i = 0; i < want.numel(); ++i)
      worst = std::max(worst, static_cast<double>(std::fabs(got[i] - want[i])));
    EXPECT_LE(worst, 1e-4 * (*hi - *lo));
    std::printf(
        "  %s: exported vs the program's float reference: max |difference| %.2e (range %.2f)\n",
        model.c_str(), worst, *hi - *lo);
    // And the model the checkpoint file holds exports the same.
    t.save(dir.file("ckpt.bin"));
    export_onnx(read_checkpoint(dir.file("ckpt.bin")), dir.file("again.onnx"));
    EXPECT_EQ(onnx_logits(dir.file("again.onnx"), x), got);
  }
}

// A NITI int8 run's export: the dequantized weights, the names of an f32 run's.
TEST(Export, Int8RunsDequantized) {
  if (!onnx_supported()) GTEST_SKIP() << "built without ONNX (libonnx-dev)";
  test::TempDir dir;
  test::write_synthetic_data(dir.file("data"), 120, 40, 3);
  Trainer t(run_config(dir, "lenet5", Precision::kInt8));
  export_onnx(t.checkpoint(), dir.file("m.onnx"));
  const OnnxModel m = read_onnx(dir.file("m.onnx"));
  const QWeight& w = t.int8_network()->weights()[0];
  const Tensor* got = m.params.find("param/0.weight");
  ASSERT_NE(got, nullptr);
  for (int64_t i = 0; i < got->numel(); ++i)
    ASSERT_EQ((*got)[i], std::ldexp(static_cast<float>(w.value.data[i]), w.value.exp)) << i;
}

}  // namespace
}  // namespace zotrain
