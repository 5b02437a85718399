#include "zotrain/models/model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "models/serialize.h"
#include "test_util.h"
#include "zotrain/core/arena.h"
#include "zotrain/core/error.h"
#include "zotrain/core/tensor_file.h"
#include "zotrain/nn/network.h"

namespace zotrain {
namespace {

TEST(Models, LeNet5HasTheClassicShapeAndParameterCount) {
  ModelSpec m = lenet5(Shape{1, 28, 28}, 10);
  Network net(m.item_shape, m.layers);
  Arena arena;
  net.allocate(arena, 1, net.num_layers(), nullptr, 0);
  // conv1 156 + conv2 2416 + fc1 48120 + fc2 10164 + fc3 850
  EXPECT_EQ(net.num_param_elements(), 61706);
  EXPECT_EQ(net.input_shape(3, 1), (Shape{1, 6, 14, 14}));
  EXPECT_EQ(net.input_shape(6, 1), (Shape{1, 16, 5, 5}));
  // 28*28*6*25 + 10*10*16*150 + 400*120 + 120*84 + 84*10 multiply-adds
  EXPECT_EQ(net.forward_macs(1), 117600 + 240000 + 48000 + 10080 + 840);
  // From the head of ZO-Feat-Cls1 (fc2, fc3), per example of a batch.
  EXPECT_EQ(net.head_start(2), 9);
  EXPECT_EQ(net.forward_macs(256, 9), 256 * (10080 + 840));
}

TEST(Models, PointNetHasTheVanillaShapeAndParameterCount) {
  ModelSpec m = model_by_name("pointnet", Shape{3, 1, 16}, 40);
  Network net(m.item_shape, m.layers);
  Arena arena;
  net.allocate(arena, 2, net.num_layers(), nullptr, 0);
  // Per-point MLP 3->64->64->64->128->1024 (weights, biases, batch norm gamma and beta), then
  // FC 1024->512->256->40 with batch norm after the first two.
  const int64_t mlp = (3 * 64 + 64) + 2 * (64 * 64 + 64) + (64 * 128 + 128) + (128 * 1024 + 1024) +
                      2 * (64 + 64 + 64 + 128 + 1024);
  const int64_t fc = (1024 * 512 + 512) + (512 * 256 + 256) + (256 * 40 + 40) + 2 * (512 + 256);
  EXPECT_EQ(net.num_param_elements(), mlp + fc);
  EXPECT_EQ(net.input_shape(15, 2), (Shape{2, 1024, 1, 16}));  // the per-point features
  EXPECT_EQ(net.input_shape(16, 2), (Shape{2, 1024}));         // after the max over points
  EXPECT_EQ(net.num_classes(), 40);
  // Running mean and variance of every batch norm; the dropout before the classifier.
  EXPECT_EQ(net.state().size(), 14u);
  EXPECT_EQ(net.state()[13].name, "20.running_var");
  EXPECT_EQ(net.spec(net.num_layers() - 2).op, Op::kDropout);
  ModelSpec plain = model_by_name("pointnet:nobn", Shape{3, 1, 16}, 40);
  EXPECT_EQ(plain.layers.size(), m.layers.size() - 7);
  for (const LayerSpec& l : plain.layers) EXPECT_NE(l.op, Op::kBatchNorm);
  Tensor in = net.input(2);
  for (int64_t i = 0; i < in.numel(); ++i) in[i] = float(i % 7) - 3;
  Tensor logits = net.forward(2);
  for (int64_t i = 0; i < logits.numel(); ++i) ASSERT_TRUE(std::isfinite(logits[i]));
}

int64_t count_params(const ModelSpec& m) {
  Network net(m.item_shape, m.layers);
  int64_t n = 0;
  for (int i = 0; i < net.num_layers(); ++i)
    for (const ParamSpec& p : net.layer(i).param_specs()) n += p.shape.numel();
  return n;
}

int count_residuals(const ModelSpec& m) {
  int n = 0;
  for (const LayerSpec& l : m.layers) n += l.op == Op::kResidual;
  return n;
}

// torchvision's resnet18 and mobilenet_v2 for 1000 classes (the ImageNet stem and strides).
TEST(Models, ResNet18AndMobileNetV2HaveThePublishedParameterCounts) {
  const ModelSpec resnet = model_by_name("resnet18", Shape{3, 224, 224}, 1000);
  EXPECT_EQ(count_params(resnet), 11689512);
  EXPECT_EQ(count_residuals(resnet), 8);
  const ModelSpec mobilenet = model_by_name("mobilenetv2", Shape{3, 224, 224}, 1000);
  EXPECT_EQ(count_params(mobilenet), 3504872);
  EXPECT_EQ(count_residuals(mobilenet), 10);  // the blocks that keep the shape
}

TEST(Models, WidthMultipliersScaleTheChannels) {
  const Shape item{3, 96, 96};
  EXPECT_EQ(model_by_name("resnet18:0.25", item, 10).layers[0].out, 16);
  const ModelSpec m = model_by_name("mobilenetv2:0.35", item, 10);
  EXPECT_EQ(m.name, "mobilenetv2:0.35");
  EXPECT_EQ(m.layers[0].out, 16);  // 32 * 0.35 = 11.2, rounded to a multiple of 8 (above 90 %)
  EXPECT_EQ(m.layers[m.layers.size() - 5].out, 1280);  // the last convolution keeps its 1280
  for (const char* bad : {"resnet18:", "resnet18:0", "resnet18:-1", "mobilenetv2:x", "resnet18x"})
    EXPECT_THROW(model_by_name(bad, item, 10), InputError) << bad;
  // Absurd sizes are refused by name (issue 22, defect 8): resnet18:1e30 built a 1-channel net,
  // mobilenetv2:1e300 cast a float out of int64's range, mlp widths overflowed the shapes.
  for (const char* bad : {"resnet18:1e30", "mobilenetv2:1e300", "resnet18:1e-30", "resnet18:17",
                          "mobilenetv2:nan", "mlp:9223372036854775807", "mlp:16777217"}) {
    try {
      model_by_name(bad, item, 10);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(model_by_name("resnet18:16", Shape{1, 8, 8}, 10));
}

// The small-input stem (up to 32 x 32) and the ImageNet one end at a few pixels for each input;
// the logits are finite in training and evaluation passes.
TEST(Models, ResNet18AndMobileNetV2FitEachInputSize) {
  struct Case {
    Shape item;
    int64_t side;  // of the last feature maps
  };
  for (const Case& c : {Case{{1, 28, 28}, 4}, Case{{3, 64, 64}, 2}, Case{{3, 96, 96}, 3}})
    for (const std::string name : {"resnet18:0.0625", "mobilenetv2:0.1"}) {
      SCOPED_TRACE(name + " " + c.item.str());
      ModelSpec m = model_by_name(name, c.item, 10);
      Network net(m.item_shape, m.layers);
      const int pool = net.num_layers() - 2;
      ASSERT_EQ(net.spec(pool).op, Op::kGlobalAvgPool);
      const Shape features = net.input_shape(pool, 2);
      EXPECT_EQ(features[2], c.side);
      EXPECT_EQ(features[3], c.side);
      Arena arena;
      net.allocate(arena, 2, 0, nullptr, 1);
      Tensor in = net.input(2);
      for (int64_t i = 0; i < in.numel(); ++i) in[i] = float(i % 11) / 5 - 1;
      for (bool training : {true, false}) {
        net.set_mode({training, 0, training});
        Tensor logits = net.forward(2);
        ASSERT_EQ(logits.shape(), (Shape{2, 10}));
        for (int64_t i = 0; i < logits.numel(); ++i) ASSERT_TRUE(std::isfinite(logits[i]));
      }
    }
}

// What `zotrain memory --model mobilenetv2:0.35 --input 3,96,96 --batch 32 --method elastic
// --bp-layers 1` plans is what the network takes from the arena (the trainer's own rows are
// checked in trainer_test.cpp).
TEST(Models, MobileNetV2OnEuroSatSizedInputsTakesItsPlan) {
  ModelSpec m = model_by_name("mobilenetv2:0.35", Shape{3, 96, 96}, 10);
  Network net(m.item_shape, m.layers);
  const int head = net.head_start(1);
  EXPECT_EQ(head, net.num_layers() - 1);
  const MemoryPlan plan = net.plan(32, head, 1);
  Arena arena;
  net.allocate(arena, 32, head, nullptr, 1);
  for (int b = 0; b < static_cast<int>(Bucket::kCount); ++b)
    EXPECT_EQ(arena.bytes(static_cast<Bucket>(b)), plan.bytes(static_cast<Bucket>(b)))
        << bucket_name(static_cast<Bucket>(b));
}

TEST(Models, ByNameBuildsMlpsAndRejectsUnknownNames) {
  EXPECT_EQ(model_by_name("mlp:32,16", Shape{1, 4, 4}, 3).layers.size(), 6u);
  EXPECT_EQ(model_by_name("mlp", Shape{1, 4, 4}, 3).layers.size(), 6u);
  EXPECT_THROW(model_by_name("mlp:32,x", Shape{1, 4, 4}, 3), InputError);
  EXPECT_THROW(model_by_name("mlp:0", Shape{1, 4, 4}, 3), InputError);
  try {
    model_by_name("resnet99", Shape{1, 4, 4}, 3);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("resnet99"), std::string::npos);
  }
}

TEST(Models, ParametersRoundTripAndForeignModelsAreRejected) {
  test::TempDir dir;
  ModelSpec m = model_by_name("mlp:8", Shape{1, 4, 4}, 3);
  Network a(m.item_shape, m.layers), b(m.item_shape, m.layers);
  Arena arena;
  a.allocate(arena, 2, a.num_layers(), nullptr, 1);
  b.allocate(arena, 2, b.num_layers(), nullptr, 2);
  TensorFile f;
  append_params(f, a);
  write_tensor_file(dir.file("m.bin"), f);
  restore_params(read_tensor_file(dir.file("m.bin")), dir.file("m.bin"), b);
  for (size_t i = 0; i < a.params().size(); ++i)
    for (int64_t k = 0; k < a.params()[i].value.numel(); ++k)
      EXPECT_EQ(a.params()[i].value[k], b.params()[i].value[k]);
  ModelSpec other = model_by_name("mlp:9", Shape{1, 4, 4}, 3);
  Network c(other.item_shape, other.layers);
  c.allocate(arena, 2, c.num_layers(), nullptr, 1);
  EXPECT_THROW(restore_params(read_tensor_file(dir.file("m.bin")), dir.file("m.bin"), c),
               InputError);
}

TEST(Models, BatchNormRunningStatisticsRoundTrip) {
  test::TempDir dir;
  // PointNet's batch norms are layers, ResNet's are also inside residual blocks
  // ("param/3.main.0.weight", "state/3.main.1.running_mean").
  for (const auto& [name, item] :
       {std::pair{"pointnet", Shape{3, 1, 4}}, std::pair{"resnet18:0.0625", Shape{1, 8, 8}}}) {
    ModelSpec m = model_by_name(name, item, 3);
    Network a(m.item_shape, m.layers), b(m.item_shape, m.layers);
    Arena arena;
    a.allocate(arena, 2, a.num_layers(), nullptr, 1);
    b.allocate(arena, 2, b.num_layers(), nullptr, 2);
    for (ParamRef& s : a.state()) s.value.fill(static_cast<float>(s.index) + 0.5f);
    if (std::string(name) != "pointnet") {
      EXPECT_EQ(a.state()[2].name, "3.main.1.running_mean");
    }
    TensorFile f;
    append_params(f, a);
    write_tensor_file(dir.file("m.bin"), f);
    restore_params(read_tensor_file(dir.file("m.bin")), dir.file("m.bin"), b);
    for (size_t i = 0; i < a.state().size(); ++i)
      EXPECT_EQ(b.state()[i].value[0], static_cast<float>(i) + 0.5f) << b.state()[i].name;
    for (size_t i = 0; i < a.params().size(); ++i)
      EXPECT_EQ(b.params()[i].value[0], a.params()[i].value[0]) << b.params()[i].name;
  }
  ModelSpec m = model_by_name("pointnet", Shape{3, 1, 4}, 3);
  Network a(m.item_shape, m.layers), b(m.item_shape, m.layers);
  Arena arena;
  a.allocate(arena, 2, a.num_layers(), nullptr, 1);
  b.allocate(arena, 2, b.num_layers(), nullptr, 1);
  // A file without them (another model's) names the missing tensor.
  TensorFile params_only;
  for (const ParamRef& p : a.params()) params_only.tensors.emplace_back("param/" + p.name, p.value);
  write_tensor_file(dir.file("p.bin"), params_only);
  try {
    restore_params(read_tensor_file(dir.file("p.bin")), dir.file("p.bin"), b);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("state/1.running_mean"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zotrain
