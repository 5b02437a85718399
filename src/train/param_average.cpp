#include "param_average.h"

#include <algorithm>
#include <cstdlib>

namespace zotrain {

namespace {

// The layer of a parameter named "<layer>.<name>" (Network's and the engines' names).
int layer_of(const std::string& param_name) {
  return std::atoi(param_name.c_str());
}

}  // namespace

std::string average_tensor_name(const std::string& param_name) {
  return "ema/" + param_name;
}

void add_average_plan(MemoryPlan& plan, const Network& net, const TrainConfig& cfg, int frozen) {
  if (cfg.ema_decay == 0) return;
  for (int i = frozen; i < net.num_layers(); ++i)
    for (const ParamSpec& ps : net.layer(i).param_specs())
      plan.add(i, net.layer(i).describe() + " " + ps.name + " average", Bucket::kOptimizer,
               ps.shape.numel() * sizeof(float));
}

ParamAverage::ParamAverage(const std::vector<ParamView>& params, int frozen, double decay,
                           Arena& arena)
    : decay_(decay) {
  for (const ParamView& p : params) {
    if (p.type != ParamView::Type::kF32 || layer_of(p.name) < frozen) continue;
    Tensor average = arena.alloc(Bucket::kOptimizer, p.shape);
    const float* from = static_cast<const float*>(p.data);
    std::copy(from, from + p.shape.numel(), average.data());
    items_.push_back({p.name, static_cast<float*>(p.data), average});
  }
}

void ParamAverage::update(int64_t steps) {
  const auto d = static_cast<float>(
      std::min(decay_, static_cast<double>(1 + steps) / static_cast<double>(10 + steps)));
  const float w = 1.0f - d;
  for (Item& item : items_) {
    float* a = item.average.data();
    const float* p = item.param;
    const int64_t n = item.average.numel();
    for (int64_t i = 0; i < n; ++i) a[i] = d * a[i] + w * p[i];
  }
}

void ParamAverage::swap() {
  for (Item& item : items_)
    std::swap_ranges(item.param, item.param + item.average.numel(), item.average.data());
}

std::vector<std::pair<std::string, Tensor>> ParamAverage::state() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const Item& item : items_) out.emplace_back(average_tensor_name(item.name), item.average);
  return out;
}

void ParamAverage::restore(const Checkpoint& ckpt) {
  for (Item& item : items_) {
    const Tensor& t =
        ckpt.file.get(average_tensor_name(item.name), item.average.shape(), ckpt.path);
    std::copy(t.data(), t.data() + t.numel(), item.average.data());
  }
}

TensorFile with_averages(const TensorFile& file) {
  TensorFile out = file;
  for (auto& [name, t] : out.tensors)
    if (name.rfind("param/", 0) == 0)
      if (const Tensor* average = file.find(average_tensor_name(name.substr(6)));
          average && average->shape() == t.shape())
        t = *average;
  return out;
}

}  // namespace zotrain
