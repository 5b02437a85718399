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
// the batch norms are left out: the integer path has none, as NITI's networks (its per-tensor
// power-of-two rescaling after every layer keeps activations in range instead).
ModelSpec pointnet(const Shape& item_shape, int64_t num_classes, bool batch_norm = true);
// A multilayer perceptron with ReLU between the given hidden widths.
ModelSpec mlp(const Shape& item_shape, const std::vector<int64_t>& hidden, int64_t num_classes);

// "lenet5", "pointnet", "pointnet:nobn", "mlp" (hidden 256, 128) or "mlp:W1,W2,..."; InputError for
// anything else.
ModelSpec model_by_name(const std::string& name, const Shape& item_shape, int64_t num_classes);
std::vector<std::string> model_names();

}  // namespace zotrain
