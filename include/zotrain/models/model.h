// Model builders: a model is a name, the shape of one input and a list of layer descriptions.
// Running it is the Network's job (nn/network.h).
#pragma once

#include <string>
#include <vector>

#include "zotrain/nn/layer_spec.h"

namespace zotrain {

struct ModelSpec {
  std::string name;  // as given to model_by_name, e.g. "lenet5" or "mlp:256,128"
  Shape item_shape;  // {C, H, W}
  int64_t num_classes = 0;
  std::vector<LayerSpec> layers;
};

// LeNet-5 with ReLU and max pooling: conv 5x5 -> 6 (padding 2, so 28x28 stays 28x28), pool,
// conv 5x5 -> 16, pool, FC 120, FC 84, FC classes.
ModelSpec lenet5(const Shape& item_shape, int64_t num_classes);
// PointNet for classification (Qi et al. 2017), the vanilla variant without the input and feature
// transform nets: on clouds laid out [3, 1, points], a shared per-point MLP 64, 64, 64, 128, 1024
// (1x1 convolutions, each with batch norm and ReLU), the max over the points, FC 512 and FC 256
// (each with batch norm and ReLU), dropout 0.3, FC classes. Without `batch_norm` ("pointnet:nobn")
// the batch norms are left out, as in NITI's networks (its per-tensor power-of-two rescaling
// after every layer keeps activations in range); the integer path runs both.
ModelSpec pointnet(const Shape& item_shape, int64_t num_classes, bool batch_norm = true);
// A multilayer perceptron with ReLU between the given hidden widths.
ModelSpec mlp(const Shape& item_shape, const std::vector<int64_t>& hidden, int64_t num_classes);

// ResNet18 (He et al. 2016): basic blocks [2, 2, 2, 2] of widths 64, 128, 256, 512 (times `width`,
// rounded), batch norm and ReLU, a 1x1 strided convolution with batch norm on the shortcut where
// the shape changes, global average pooling, FC classes. The stem fits the input: up to 32 x 32
// (28 x 28 MNIST) a 3x3 stride-1 convolution without max pooling, as the CIFAR variants; larger
// inputs (64 x 64, 96 x 96, 224 x 224) ImageNet's 7x7 stride-2 convolution and a stride-2 max
// pool (2x2 here, the pooling layers having no padding; the same output size as the 3x3 padded
// one). Convolutions have no bias (the batch norm after them subtracts any), as in the paper.
ModelSpec resnet18(const Shape& item_shape, int64_t num_classes, double width = 1.0);
// MobileNetV2 (Sandler et al. 2018): a 3x3 stride-2 convolution to 32 channels, the inverted
// residual stages [t, c, n, s] = [1,16,1,1] [6,24,2,2] [6,32,3,2] [6,64,4,2] [6,96,3,1]
// [6,160,3,2] [6,320,1,1] (1x1 expansion by t, 3x3 depthwise convolution, ReLU6 after both, 1x1
// linear bottleneck; a residual connection where the shape is kept), a 1x1 convolution to 1280,
// global average pooling, FC classes. `width` multiplies every channel count, rounded to a
// multiple of 8; the last convolution stays 1280 below 1, as in the paper. Inputs up to 32 x 32
// run the first convolution and the 24-channel stage at stride 1 (total stride 8: 28 x 28 ends at
// 4 x 4 rather than 1 x 1); larger inputs keep the ImageNet strides (total 32: 96 x 96 ends at
// 3 x 3).
ModelSpec mobilenetv2(const Shape& item_shape, int64_t num_classes, double width = 1.0);

// "lenet5", "pointnet", "pointnet:nobn", "mlp" (hidden 256, 128), "mlp:W1,W2,...", "resnet18",
// "mobilenetv2", or either with a width multiplier ("resnet18:0.25", "mobilenetv2:0.35");
// InputError for anything else.
ModelSpec model_by_name(const std::string& name, const Shape& item_shape, int64_t num_classes);
std::vector<std::string> model_names();

}  // namespace zotrain
