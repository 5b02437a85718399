#include "zotrain/models/model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "zotrain/core/error.h"
#include "zotrain/models/onnx.h"

namespace zotrain {

namespace {

void append(std::vector<LayerSpec>& to, const std::vector<LayerSpec>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

// A k x k convolution (padding k / 2) without bias, since the batch norm after it subtracts any,
// the batch norm, then `activation` (none when empty).
std::vector<LayerSpec> conv_bn(int64_t out, int64_t kernel, int64_t stride,
                               const std::vector<LayerSpec>& activation, int64_t groups = 1) {
  std::vector<LayerSpec> layers = {
      LayerSpec::conv2d(out, kernel, stride, kernel / 2, groups, false), LayerSpec::batch_norm()};
  append(layers, activation);
  return layers;
}

// Inputs no larger than 32 x 32 (MNIST, CIFAR) get the small-input variants of the ImageNet
// networks: fewer stride-2 steps at the start, so that the last feature maps are still 4 x 4.
bool small_input(const Shape& item_shape) {
  return item_shape.rank == 3 && std::max(item_shape[1], item_shape[2]) <= 32;
}

// MobileNetV2's channel rounding (_make_divisible in the reference code): the nearest multiple of
// 8, at least 8 and not below 90 % of v.
int64_t multiple_of_8(double v) {
  int64_t r = std::max<int64_t>(8, static_cast<int64_t>(v + 4) / 8 * 8);
  if (r < 0.9 * v) r += 8;
  return r;
}

// The width multiplier of "family:W" (1 for a bare "family").
double width_of(const std::string& name, const std::string& family) {
  if (name == family) return 1.0;
  const std::string w = name.substr(family.size() + 1);
  // strtod, not stod: no exceptions (the core builds without them); out of range fails below.
  char* end = nullptr;
  const double v = std::strtod(w.c_str(), &end);
  const size_t used = static_cast<size_t>(end - w.c_str());
  // Bounded: 1e30 overflowed the channel count into a 1-channel net, 1e300 was undefined
  // behaviour (a float-to-integer cast out of range).
  if (used != w.size() || !(v >= 1.0 / 64 && v <= 16))
    ZT_THROW(InputError("model '" + name + "': width multiplier '" + w +
                        "' is not a number in [1/64, 16]"));
  return v;
}

bool is_family(const std::string& name, const std::string& family) {
  return name == family || name.rfind(family + ":", 0) == 0;
}

}  // namespace

ModelSpec lenet5(const Shape& item_shape, int64_t num_classes) {
  using L = LayerSpec;
  return {"lenet5",
          item_shape,
          num_classes,
          {L::conv2d(6, 5, 1, 2), L::relu(), L::max_pool(2), L::conv2d(16, 5), L::relu(),
           L::max_pool(2), L::flatten(), L::linear(120), L::relu(), L::linear(84), L::relu(),
           L::linear(num_classes)}};
}

ModelSpec pointnet(const Shape& item_shape, int64_t num_classes, bool batch_norm) {
  using L = LayerSpec;
  ModelSpec m{batch_norm ? "pointnet" : "pointnet:nobn", item_shape, num_classes, {}};
  auto block = [&](LayerSpec layer) {
    m.layers.push_back(layer);
    if (batch_norm) m.layers.push_back(L::batch_norm());
    m.layers.push_back(L::relu());
  };
  for (int64_t width : {64, 64, 64, 128, 1024}) block(L::conv2d(width, 1));
  m.layers.push_back(L::global_max_pool());
  for (int64_t width : {512, 256}) block(L::linear(width));
  m.layers.push_back(L::dropout(0.3));
  m.layers.push_back(L::linear(num_classes));
  return m;
}

ModelSpec mlp(const Shape& item_shape, const std::vector<int64_t>& hidden, int64_t num_classes) {
  ModelSpec m{"mlp", item_shape, num_classes, {LayerSpec::flatten()}};
  for (int64_t w : hidden) {
    m.layers.push_back(LayerSpec::linear(w));
    m.layers.push_back(LayerSpec::relu());
  }
  m.layers.push_back(LayerSpec::linear(num_classes));
  return m;
}

ModelSpec resnet18(const Shape& item_shape, int64_t num_classes, double width) {
  using L = LayerSpec;
  const auto channels = [&](int64_t c) { return std::max<int64_t>(1, std::llround(c * width)); };
  ModelSpec m{"resnet18", item_shape, num_classes, {}};
  if (small_input(item_shape)) {
    m.layers = conv_bn(channels(64), 3, 1, {L::relu()});
  } else {
    m.layers = conv_bn(channels(64), 7, 2, {L::relu()});
    m.layers.push_back(L::max_pool(2));
  }
  int64_t in = channels(64);
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t out = channels(64 << stage);
    for (int block = 0; block < 2; ++block) {
      const int64_t stride = stage > 0 && block == 0 ? 2 : 1;
      std::vector<LayerSpec> main = conv_bn(out, 3, stride, {L::relu()});
      append(main, conv_bn(out, 3, 1, {}));
      std::vector<LayerSpec> shortcut;
      if (stride != 1 || in != out) shortcut = conv_bn(out, 1, stride, {});
      m.layers.push_back(L::residual(main, shortcut, true));
      in = out;
    }
  }
  m.layers.push_back(L::global_avg_pool());
  m.layers.push_back(L::linear(num_classes));
  return m;
}

ModelSpec mobilenetv2(const Shape& item_shape, int64_t num_classes, double width) {
  using L = LayerSpec;
  struct Stage {
    int64_t t, c, n, s;  // expansion, output channels, blocks, stride of the first block
  };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                          {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  const bool small = small_input(item_shape);
  ModelSpec m{"mobilenetv2", item_shape, num_classes, {}};
  int64_t in = multiple_of_8(32 * width);
  m.layers = conv_bn(in, 3, small ? 1 : 2, {L::relu6()});
  for (const Stage& st : stages) {
    const int64_t out = multiple_of_8(st.c * width);
    for (int64_t i = 0; i < st.n; ++i) {
      // Small inputs also keep the resolution in the 24-channel stage.
      const int64_t stride = i > 0 || (small && st.c == 24) ? 1 : st.s;
      const int64_t hidden = std::llround(static_cast<double>(in) * st.t);
      std::vector<LayerSpec> block;
      if (st.t != 1) block = conv_bn(hidden, 1, 1, {L::relu6()});
      append(block, conv_bn(hidden, 3, stride, {L::relu6()}, hidden));
      append(block, conv_bn(out, 1, 1, {}));  // the linear bottleneck
      if (stride == 1 && in == out)
        m.layers.push_back(L::residual(block, {}, false));
      else
        append(m.layers, block);
      in = out;
    }
  }
  // The paper keeps the last convolution at 1280 for multipliers below 1.
  append(m.layers, conv_bn(multiple_of_8(1280 * std::max(1.0, width)), 1, 1, {L::relu6()}));
  m.layers.push_back(L::global_avg_pool());
  m.layers.push_back(L::linear(num_classes));
  return m;
}

std::vector<std::string> model_names() {
  return {"lenet5",         "pointnet",    "pointnet:nobn",    "mlp", "mlp:W1,W2,...", "resnet18",
          "resnet18:WIDTH", "mobilenetv2", "mobilenetv2:WIDTH"};
}

ModelSpec model_by_name(const std::string& name, const Shape& item_shape, int64_t num_classes) {
  if (is_onnx_path(name)) {
    ModelSpec m = read_onnx(name).spec;
    if (m.item_shape != item_shape || m.num_classes != num_classes)
      ZT_THROW(InputError(name + ": the model takes inputs " + m.item_shape.str() + " and gives " +
                          std::to_string(m.num_classes) + " classes; the data has " +
                          item_shape.str() + " and " + std::to_string(num_classes)));
    return m;
  }
  if (name == "lenet5") return lenet5(item_shape, num_classes);
  if (name == "pointnet" || name == "pointnet:nobn")
    return pointnet(item_shape, num_classes, name == "pointnet");
  if (name == "mlp") return mlp(item_shape, {256, 128}, num_classes);
  for (const auto& [family, build] :
       {std::pair{"resnet18", &resnet18}, std::pair{"mobilenetv2", &mobilenetv2}})
    if (is_family(name, family)) {
      ModelSpec m = build(item_shape, num_classes, width_of(name, family));
      m.name = name;
      return m;
    }
  if (name.rfind("mlp:", 0) == 0) {
    std::vector<int64_t> hidden;
    std::stringstream ss(name.substr(4));
    std::string w;
    while (std::getline(ss, w, ',')) {
      char* end = nullptr;
      const long long v = std::strtoll(w.c_str(), &end, 10);
      const size_t used = static_cast<size_t>(end - w.c_str());
      if (used != w.size() || v <= 0 || v > (1 << 24))
        ZT_THROW(InputError("model '" + name + "': hidden width '" + w +
                            "' is not an integer in [1, 2^24]"));
      hidden.push_back(v);
    }
    ModelSpec m = mlp(item_shape, hidden, num_classes);
    m.name = name;
    return m;
  }
  std::string known;
  for (const auto& n : model_names()) known += (known.empty() ? "" : ", ") + n;
  ZT_THROW(InputError("unknown model '" + name + "' (known: " + known + ")"));
}

}  // namespace zotrain
