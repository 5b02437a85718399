#include "zotrain/models/model.h"

#include <sstream>

#include "zotrain/core/error.h"

namespace zotrain {

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

std::vector<std::string> model_names() {
  return {"lenet5", "pointnet", "pointnet:nobn", "mlp", "mlp:W1,W2,..."};
}

ModelSpec model_by_name(const std::string& name, const Shape& item_shape, int64_t num_classes) {
  if (name == "lenet5") return lenet5(item_shape, num_classes);
  if (name == "pointnet" || name == "pointnet:nobn")
    return pointnet(item_shape, num_classes, name == "pointnet");
  if (name == "mlp") return mlp(item_shape, {256, 128}, num_classes);
  if (name.rfind("mlp:", 0) == 0) {
    std::vector<int64_t> hidden;
    std::stringstream ss(name.substr(4));
    std::string w;
    while (std::getline(ss, w, ',')) {
      size_t used = 0;
      long long v = 0;
      try {
        v = std::stoll(w, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != w.size() || v <= 0)
        throw InputError("model '" + name + "': hidden width '" + w +
                         "' is not a positive integer");
      hidden.push_back(v);
    }
    ModelSpec m = mlp(item_shape, hidden, num_classes);
    m.name = name;
    return m;
  }
  std::string known;
  for (const auto& n : model_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("unknown model '" + name + "' (known: " + known + ")");
}

}  // namespace zotrain
