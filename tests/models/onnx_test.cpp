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
#include "nn/loss.h"
#include "test_util.h"
#include "zotrain/core/arena.h"
#include "zotrain/core/error.h"
#include "zotrain/nn/network.h"

namespace zotrain {
namespace {

// A file of little-endian values of type T.
template <typename T>
std::vector<T> read_values(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  const auto bytes = static_cast<size_t>(in.tellg());
  std::vector<T> v(bytes / sizeof(T));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(bytes));
  return v;
}
const auto read_floats = read_values<float>;
const auto read_doubles = read_values<double>;

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
      GTEST_SKIP()
          << "python3-torch or python3-torchvision is not installed (the models come from them)";
    ASSERT_EQ(export_code, 0) << "tests/models/onnx_models.py failed";
  }
  static std::string file(const std::string& name) { return models->file(name); }

  // zotrain's logits of a model on inputs x (rows of its item shape), in evaluation mode.
  static std::vector<float> logits(const OnnxModel& m, const std::vector<float>& x,
                                   const std::string& path) {
    const int64_t rows = static_cast<int64_t>(x.size()) / m.spec.item_shape.numel();
    Network net(m.spec.item_shape, m.spec.layers);
    Arena arena;
    net.allocate(arena, rows, net.num_layers(), nullptr, 0);
    restore_params(m.params, path, net);
    std::copy(x.begin(), x.end(), net.input(rows).data());
    net.set_mode({false, 0, false});
    const Tensor y = net.forward(rows);
    return std::vector<float>(y.data(), y.data() + y.numel());
  }

  // `got` against `want`: within 1e-4 of want's range.
  static void expect_close(const std::vector<float>& got, const std::vector<float>& want,
                           const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    const auto [lo, hi] = std::minmax_element(want.begin(), want.end());
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]));
    EXPECT_LE(worst, 1e-4 * (*hi - *lo)) << "max |difference|, " << what;
    std::printf("  %s: max |difference| %.2e (range of the reference %.2f)\n", what.c_str(), worst,
                *hi - *lo);
  }

  // The gradients of a BP step of model `name` (labels 0, 1, 2; every parameter's, in order)
  // against PyTorch's of `reference`, in evaluation or `training` mode.
  void expect_torch_gradients(const std::string& name, const std::string& reference,
                              bool training) {
    SCOPED_TRACE(name);
    const OnnxModel m = read_onnx(file(name + ".onnx"));
    const std::vector<float> x = read_floats(file(name + ".input.bin"));
    Network net(m.spec.item_shape, m.spec.layers);
    Arena arena;
    net.allocate(arena, 3, 0, nullptr, 0);  // Full BP
    restore_params(m.params, name, net);
    std::copy(x.begin(), x.end(), net.input(3).data());
    net.set_mode({training, 0, false});
    net.zero_grad();
    const Tensor logits = net.forward(3);
    Tensor dlogits = net.logits_grad(3);
    const uint8_t labels[3] = {0, 1, 2};
    softmax_cross_entropy(logits, labels, &dlogits, nullptr);
    net.backward(dlogits);
    std::vector<float> got;
    for (const ParamRef& p : net.params())
      got.insert(got.end(), p.grad.data(), p.grad.data() + p.grad.numel());
    // Against PyTorch's float64 gradients: within 1e-4 of their range, or (batch norm over a few
    // values per channel, which amplifies rounding) no further than twice PyTorch's float32.
    const std::vector<double> exact = read_doubles(file(reference + ".grads64.bin"));
    const std::vector<float> torch32 = read_floats(file(reference + ".grads.bin"));
    ASSERT_EQ(got.size(), exact.size());
    ASSERT_EQ(torch32.size(), exact.size());
    const auto [lo, hi] = std::minmax_element(exact.begin(), exact.end());
    double ours = 0, theirs = 0;
    for (size_t i = 0; i < exact.size(); ++i) {
      ours = std::max(ours, std::fabs(got[i] - exact[i]));
      theirs = std::max(theirs, std::fabs(torch32[i] - exact[i]));
    }
    EXPECT_LE(ours, std::max(1e-4 * (*hi - *lo), 2 * theirs)) << name;
    std::printf(
        "  %s gradients of a BP step%s against PyTorch's float64: max |difference| %.2e "
        "(PyTorch float32: %.2e; range %.2f)\n",
        name.c_str(), training ? " (training mode)" : "", ours, theirs, *hi - *lo);
  }

  // zotrain's logits of model `name` on the exported inputs against PyTorch's.
  void expect_torch_logits(const std::string& name) {
    SCOPED_TRACE(name);
    const OnnxModel m = read_onnx(file(name + ".onnx"));
    const std::vector<float> x = read_floats(file(name + ".input.bin"));
    ASSERT_EQ(static_cast<int64_t>(x.size()), 3 * m.spec.item_shape.numel());
    expect_close(
        logits(m, x, name), read_floats(file(name + ".logits.bin")),
        name + " (" + std::to_string(m.spec.layers.size()) + " layers), zotrain vs PyTorch");
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

TEST_F(Onnx, LeNet5BackpropGivesPyTorchsGradients) {
  expect_torch_gradients("lenet5", "lenet5", false);
}

// Batch norm in training mode (the batch's statistics) and residual blocks, backward.
TEST_F(Onnx, ResidualBlocksBackpropGivesPyTorchsGradients) {
  expect_torch_gradients("residual_bn", "residual", true);
  expect_torch_gradients("inverted_residual_bn", "inverted_residual", true);
}

// torchvision's ResNet18 and MobileNetV2 whole: logits with batch norm folded by the exporter
// and kept, and a BP step in training mode.
TEST_F(Onnx, TorchvisionResNet18AndMobileNetV2GivePyTorchsLogitsAndGradients) {
  for (const std::string name : {"resnet18", "mobilenetv2"}) {
    expect_torch_logits(name);
    expect_torch_logits(name + "_bn");
    expect_torch_gradients(name + "_bn", name, true);
  }
  const OnnxModel m = read_onnx(file("resnet18_bn.onnx"));
  EXPECT_EQ(m.spec.layers[3].op, Op::kMaxPool2d);
  EXPECT_EQ(m.spec.layers[3].stride, 2);
  EXPECT_EQ(m.spec.layers[3].pad, 1);
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

TEST_F(Onnx, ExportedModelsPassTheCheckerAndRunInOnnxRuntime) {
  const bool checker = std::system("/usr/bin/python3 -c 'import onnx' 2>/dev/null") == 0;
  const std::string ort = std::string(ZOTRAIN_SOURCE_DIR) + "/tools/onnxruntime";
  const bool runtime = std::system(("command -v node >/dev/null && test -d " + ort +
                                    "/node_modules/onnxruntime-node")
                                       .c_str()) == 0;
  if (!checker) std::printf("  (no python3-onnx: the ONNX checker is skipped)\n");
  if (!runtime)
    std::printf("  (no onnxruntime-node in %s: scripts/setup.sh installs it)\n", ort.c_str());
  for (const std::string name : {"lenet5", "odd_shapes_bn", "residual_bn", "inverted_residual_bn",
                                 "resnet18_bn", "mobilenetv2_bn"}) {
    SCOPED_TRACE(name);
    const OnnxModel m = read_onnx(file(name + ".onnx"));
    const std::vector<float> x = read_floats(file(name + ".input.bin"));
    const std::vector<float> ours = logits(m, x, name);
    const std::string out = dir.file(name + ".zotrain.onnx");
    write_onnx(out, m.spec, m.params);
    // Read back: the same model, the same bits.
    EXPECT_EQ(logits(read_onnx(out), x, out), ours);
    if (checker) {
      const std::string check =
          "/usr/bin/python3 -c 'import onnx, sys; onnx.checker.check_model("
          "onnx.load(sys.argv[1]), full_check=True)' " +
          out;
      EXPECT_EQ(std::system(check.c_str()), 0) << "the ONNX checker refuses " << out;
    }
    if (!runtime) continue;
    const Shape& s = m.spec.item_shape;
    const std::string dims =
        "3," + std::to_string(s[0]) + "," + std::to_string(s[1]) + "," + std::to_string(s[2]);
    ASSERT_EQ(std::system(("node " + ort + "/run.js " + out + " " + file(name + ".input.bin") +
                           " " + dims + " " + dir.file("ort.bin"))
                              .c_str()),
              0);
    expect_close(read_floats(dir.file("ort.bin")), ours, name + ", ONNX Runtime vs zotrain");
  }
}

TEST_F(Onnx, InitializersSharedThroughIdentityNodes) {
  expect_torch_logits("shared_initializers");
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
