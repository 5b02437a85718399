// ONNX model files exported by PyTorch (tests/models/onnx_models.py) give PyTorch's logits in
// zotrain; bad files are refused naming the node. Skipped, with a message, where the build has no
// ONNX or the machine no python3-torch.
#include "zotrain/models/onnx.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "models/serialize.h"
#include "test_util.h"
#include "zotrain/core/arena.h"
#include "zotrain/core/error.h"
#include "zotrain/nn/network.h"

namespace zotrain {
namespace {

std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  const auto bytes = static_cast<size_t>(in.tellg());
  std::vector<float> v(bytes / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(bytes));
  return v;
}

class Onnx : public ::testing::Test {
 protected:
  // The models are exported once for the suite (a few seconds of PyTorch).
  static void SetUpTestSuite() {
    if (!onnx_supported()) return;
    models = new test::TempDir;
    const std::string cmd = std::string("/usr/bin/python3 ") + ZOTRAIN_SOURCE_DIR +
                            "/tests/models/onnx_models.py " + models->path().string() +
                            " >/dev/null 2>&1";
    const int status = std::system(cmd.c_str());
    export_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  static void TearDownTestSuite() {
    delete models;
    models = nullptr;
  }
  void SetUp() override {
    if (!onnx_supported()) GTEST_SKIP() << "built without ONNX (libonnx-dev, libprotobuf-dev)";
    if (export_code == 77)
      GTEST_SKIP() << "python3-torch is not installed (the models come from it)";
    ASSERT_EQ(export_code, 0) << "tests/models/onnx_models.py failed";
  }
  static std::string file(const std::string& name) { return models->file(name); }

  // zotrain's logits of model `name` on the exported inputs, in evaluation mode, against
  // PyTorch's: within 1e-4 of the logits' range.
  void expect_torch_logits(const std::string& name) {
    SCOPED_TRACE(name);
    const OnnxModel m = read_onnx(file(name + ".onnx"));
    const std::vector<float> x = read_floats(file(name + ".input.bin"));
    const std::vector<float> want = read_floats(file(name + ".logits.bin"));
    const int64_t rows = static_cast<int64_t>(x.size()) / m.spec.item_shape.numel();
    ASSERT_EQ(rows, 3);
    Network net(m.spec.item_shape, m.spec.layers);
    Arena arena;
    net.allocate(arena, rows, net.num_layers(), nullptr, 0);
    restore_params(m.params, name, net);
    std::copy(x.begin(), x.end(), net.input(rows).data());
    net.set_mode({false, 0, false});
    const Tensor y = net.forward(rows);
    ASSERT_EQ(static_cast<size_t>(y.numel()), want.size());
    const auto [lo, hi] = std::minmax_element(want.begin(), want.end());
    const double tol = 1e-4 * (*hi - *lo);
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::fabs(static_cast<double>(y[static_cast<int64_t>(i)]) - want[i]));
    EXPECT_LE(worst, tol) << "max |zotrain - PyTorch| over the logits";
    std::printf("  %s: %zu layers, max |zotrain - PyTorch| %.2e (range %.2f)\n", name.c_str(),
                m.spec.layers.size(), worst, *hi - *lo);
  }

  static test::TempDir* models;
  static int export_code;
  test::TempDir dir;
};

test::TempDir* Onnx::models = nullptr;
int Onnx::export_code = -1;

TEST_F(Onnx, LeNet5GivesPyTorchsLogits) {
  expect_torch_logits("lenet5");
}

TEST_F(Onnx, StridesGroupsPoolsAndBatchNormGivePyTorchsLogits) {
  expect_torch_logits("odd_shapes");
  expect_torch_logits("odd_shapes_bn");
}

TEST_F(Onnx, ResidualBlocksGivePyTorchsLogits) {
  expect_torch_logits("residual");
  expect_torch_logits("residual_bn");
  expect_torch_logits("inverted_residual");
  expect_torch_logits("inverted_residual_bn");
  const OnnxModel m = read_onnx(file("residual_bn.onnx"));
  EXPECT_EQ(m.spec.layers[3].op, Op::kResidual);
  EXPECT_TRUE(m.spec.layers[3].shortcut.empty());   // the identity
  EXPECT_EQ(m.spec.layers[4].shortcut.size(), 2u);  // projection and its batch norm
  EXPECT_TRUE(m.params.find("state/4.shortcut.1.running_var"));
}

TEST_F(Onnx, BadFilesAreRefusedByName) {
  std::ofstream(dir.file("junk.onnx")) << "not a model";
  try {
    read_onnx(dir.file("junk.onnx"));
    FAIL() << "junk accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("junk.onnx"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_onnx(dir.file("missing.onnx")), InputError);
}

}  // namespace
}  // namespace zotrain
