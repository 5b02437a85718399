#include "zotrain/nn/layer_spec.h"

#include <gtest/gtest.h>

#include <vector>

#include "zotrain/core/error.h"

namespace zotrain {
namespace {

TEST(LayerSpec, BuildsLeNet5) {
  const std::vector<LayerSpec> specs = {
      LayerSpec::conv2d(6, 5, 1, 2), LayerSpec::relu(),      LayerSpec::max_pool(2),
      LayerSpec::conv2d(16, 5),      LayerSpec::relu(),      LayerSpec::avg_pool(2),
      LayerSpec::flatten(),          LayerSpec::linear(120), LayerSpec::relu(),
      LayerSpec::linear(10)};
  const std::vector<Shape> shapes = {{8, 1, 28, 28}, {8, 6, 28, 28},  {8, 6, 28, 28},
                                     {8, 6, 14, 14}, {8, 16, 10, 10}, {8, 16, 10, 10},
                                     {8, 16, 5, 5},  {8, 400},        {8, 120},
                                     {8, 120},       {8, 10}};
  const std::vector<std::string> names = {"conv2d 1->6 k5 s1 p2",
                                          "relu",
                                          "max_pool2d k2 s2",
                                          "conv2d 6->16 k5 s1 p0",
                                          "relu",
                                          "avg_pool2d k2 s2",
                                          "flatten",
                                          "linear 400->120",
                                          "relu",
                                          "linear 120->10"};
  for (size_t i = 0; i < specs.size(); ++i) {
    auto layer = make_layer(specs[i], shapes[i]);
    EXPECT_EQ(layer->describe(), names[i]);
    EXPECT_EQ(layer->output_shape(shapes[i]), shapes[i + 1]) << names[i];
  }
}

TEST(LayerSpec, OpNames) {
  EXPECT_STREQ(op_name(Op::kLinear), "linear");
  EXPECT_STREQ(op_name(Op::kConv2d), "conv2d");
  EXPECT_STREQ(op_name(Op::kReLU), "relu");
  EXPECT_STREQ(op_name(Op::kMaxPool2d), "max_pool2d");
  EXPECT_STREQ(op_name(Op::kAvgPool2d), "avg_pool2d");
  EXPECT_STREQ(op_name(Op::kFlatten), "flatten");
  EXPECT_STREQ(op_name(Op::kBatchNorm), "batch_norm");
  EXPECT_STREQ(op_name(Op::kGlobalMaxPool), "global_max_pool");
  EXPECT_STREQ(op_name(Op::kReLU6), "relu6");
  EXPECT_STREQ(op_name(Op::kGlobalAvgPool), "global_avg_pool");
}

TEST(LayerSpec, BuildsMobileNetLayers) {
  const Shape in{8, 32, 16, 16};
  auto depthwise = make_layer(LayerSpec::conv2d(32, 3, 2, 1, 32), in);
  EXPECT_EQ(depthwise->describe(), "conv2d 32->32 k3 s2 p1 g32");
  EXPECT_EQ(depthwise->output_shape(in), (Shape{8, 32, 8, 8}));
  EXPECT_EQ(depthwise->param_specs()[0].shape, (Shape{32, 1, 3, 3}));
  EXPECT_EQ(make_layer(LayerSpec::conv2d(64, 1), in)->describe(), "conv2d 32->64 k1 s1 p0");
  auto relu6 = make_layer(LayerSpec::relu6(), in);
  EXPECT_EQ(relu6->describe(), "relu6");
  EXPECT_TRUE(relu6->in_place());
  auto pool = make_layer(LayerSpec::global_avg_pool(), in);
  EXPECT_EQ(pool->describe(), "global_avg_pool");
  EXPECT_EQ(pool->output_shape(in), (Shape{8, 32}));
}

TEST(LayerSpec, BuildsPointNetLayers) {
  auto bn = make_layer(LayerSpec::batch_norm(), Shape{8, 64, 1, 32});
  EXPECT_EQ(bn->describe(), "batch_norm 64");
  EXPECT_EQ(make_layer(LayerSpec::batch_norm(), Shape{8, 512})->describe(), "batch_norm 512");
  auto pool = make_layer(LayerSpec::global_max_pool(), Shape{8, 1024, 1, 32});
  EXPECT_EQ(pool->output_shape(Shape{8, 1024, 1, 32}), (Shape{8, 1024}));
}

// The message names the op, the input shape and the problem.
void expect_input_error(const LayerSpec& spec, const Shape& in, const std::string& problem) {
  try {
    make_layer(spec, in);
    ADD_FAILURE() << op_name(spec.op) << " on " << in.str() << " was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(op_name(spec.op)), std::string::npos) << what;
    EXPECT_NE(what.find(in.str()), std::string::npos) << what;
    EXPECT_NE(what.find(problem), std::string::npos) << what;
  }
}

TEST(LayerSpec, RejectsSpecsThatDoNotFit) {
  expect_input_error(LayerSpec::conv2d(6, 5), Shape{8, 784}, "needs an input [N, C, H, W]");
  expect_input_error(LayerSpec::conv2d(6, 5), Shape{8, 1, 4, 28}, "kernel 5 is larger");
  expect_input_error(LayerSpec::conv2d(6, 7, 1, 1), Shape{8, 1, 28, 4}, "kernel 7 is larger");
  expect_input_error(LayerSpec::conv2d(0, 3), Shape{8, 1, 28, 28}, "output size");
  expect_input_error(LayerSpec::conv2d(6, 0), Shape{8, 1, 28, 28}, "kernel must be positive");
  expect_input_error(LayerSpec::conv2d(6, 3, 0), Shape{8, 1, 28, 28}, "stride");
  expect_input_error(LayerSpec::conv2d(6, 3, 1, -1), Shape{8, 1, 28, 28}, "padding");
  expect_input_error(LayerSpec::conv2d(6, 3), Shape{8, 0, 28, 28}, "empty dimension");
  expect_input_error(LayerSpec::max_pool(3), Shape{8, 6, 2, 2}, "kernel 3 is larger");
  expect_input_error(LayerSpec::avg_pool(2), Shape{8, 400}, "needs an input [N, C, H, W]");
  expect_input_error(LayerSpec::max_pool(2, 2, 2), Shape{8, 6, 8, 8}, "padding 2 must be below");
  expect_input_error({Op::kAvgPool2d, 0, 2, 2, 1}, Shape{8, 6, 8, 8}, "padding is not supported");
  expect_input_error(LayerSpec::linear(0), Shape{8, 400}, "output size");
  expect_input_error(LayerSpec::linear(10), Shape{8}, "non-empty input");
  expect_input_error(LayerSpec::flatten(), Shape{8}, "needs an input [N, ...]");
  expect_input_error(LayerSpec::batch_norm(), Shape{8, 3, 4}, "needs an input [N, C] or");
  expect_input_error(LayerSpec::batch_norm(), Shape{8, 0}, "empty dimension");
  expect_input_error(LayerSpec::global_max_pool(), Shape{8, 64}, "positions to pool over");
  expect_input_error(LayerSpec::global_max_pool(), Shape{8, 64, 1, 0}, "empty dimension");
  expect_input_error(LayerSpec::global_avg_pool(), Shape{8, 64}, "positions to pool over");
  for (int64_t groups : {0, -1, 3, 4})  // 3 divides neither 8 nor 4 channels; 4 not 6 outputs
    expect_input_error(LayerSpec::conv2d(6, 3, 1, 0, groups), Shape{8, 8, 5, 5},
                       "groups " + std::to_string(groups) +
                           " must divide both the input channels "
                           "8 and the output channels 6");
}

}  // namespace
}  // namespace zotrain
