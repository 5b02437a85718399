#include "param_average.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>

#include "zotrain/core/error.h"
#include "zotrain/nn/int8/qnetwork.h"

namespace zotrain {

namespace {

// Fraction bits of an int8 weight's average: 127 << 16 leaves an int32 room, and a step's share
// (at most 2^-10 of a difference for ema_decay 0.999) keeps 6 bits.
constexpr int kFractionBits = 16;
constexpr float kFractionScale = 1 << kFractionBits;

// The layer of a parameter named "<layer>.<name>" (Network's and the engines' names).
int layer_of(const std::string& param_name) {
  return std::atoi(param_name.c_str());
}

int8_t rounded(int32_t fixed) {
  const int32_t m = (fixed + (1 << (kFractionBits - 1))) >> kFractionBits;
  return static_cast<int8_t>(std::clamp(m, -127, 127));
}

}  // namespace

std::string average_tensor_name(const std::string& param_name) {
  return "ema/" + param_name;
}

int8_t average_mantissa(float average) {
  return rounded(static_cast<int32_t>(average * kFractionScale));
}

void add_average_plan(MemoryPlan& plan, const Network& net, const TrainConfig& cfg, int frozen) {
  if (cfg.ema_decay == 0) return;
  if (cfg.precision == Precision::kInt8) {
    const QNetwork qnet(net);
    for (int i = frozen; i < net.num_layers(); ++i)
      if (const int64_t n = qnet.layer(i).weight_shape().numel(); n > 0) {
        plan.add(i, net.layer(i).describe() + " weight average", Bucket::kOptimizer,
                 static_cast<size_t>(n) * sizeof(int32_t));
        plan.add(i, net.layer(i).describe() + " weight as trained, while evaluated",
                 Bucket::kOptimizer, static_cast<size_t>(n));
      }
    return;
  }
  for (int i = frozen; i < net.num_layers(); ++i)
    for (const ParamSpec& ps : net.layer(i).param_specs())
      plan.add(i, net.layer(i).describe() + " " + ps.name + " average", Bucket::kOptimizer,
               ps.shape.numel() * sizeof(float));
}

ParamAverage::ParamAverage(const std::vector<ParamView>& params, int frozen, double decay,
                           int warmup, Arena& arena)
    : decay_(decay),
      warmup_(warmup),
      max_shift_(std::max(0, static_cast<int>(std::lround(-std::log2(1 - decay))))) {
  for (const ParamView& p : params) {
    if (layer_of(p.name) < frozen) continue;
    Item item;
    item.name = p.name;
    item.shape = p.shape;
    item.n = p.shape.numel();
    if (p.type == ParamView::Type::kF32) {
      item.param = static_cast<float*>(p.data);
      item.average = arena.alloc(Bucket::kOptimizer, p.shape);
      std::copy(item.param, item.param + item.n, item.average.data());
    } else {
      item.mantissas = static_cast<int8_t*>(p.data);
      const auto bytes = static_cast<size_t>(item.n);
      item.fixed = static_cast<int32_t*>(arena.alloc_bytes(Bucket::kOptimizer, bytes * 4));
      item.held = static_cast<int8_t*>(arena.alloc_bytes(Bucket::kOptimizer, bytes));
      for (int64_t i = 0; i < item.n; ++i)
        item.fixed[i] = static_cast<int32_t>(item.mantissas[i]) * (1 << kFractionBits);
    }
    items_.push_back(std::move(item));
  }
}

void ParamAverage::update(int64_t steps) {
  const auto d = static_cast<float>(
      std::min(decay_, static_cast<double>(1 + steps) / static_cast<double>(warmup_ + steps)));
  const float w = 1.0f - d;
  // The integer decay's warm-up: a share of 2^-shift, the power of two at or above
  // (warmup - 1) / (warmup + t).
  const int shift = std::min(
      max_shift_,
      static_cast<int>(std::bit_width(static_cast<uint64_t>((warmup_ + steps) / (warmup_ - 1)))) -
          1);
  for (Item& item : items_) {
    if (item.fixed) {
      for (int64_t i = 0; i < item.n; ++i)
        item.fixed[i] +=
            (static_cast<int32_t>(item.mantissas[i]) * (1 << kFractionBits) - item.fixed[i]) >>
            shift;
      continue;
    }
    float* a = item.average.data();
    const float* p = item.param;
    for (int64_t i = 0; i < item.n; ++i) a[i] = d * a[i] + w * p[i];
  }
}

void ParamAverage::swap() {
  swapped_ = !swapped_;
  for (Item& item : items_) {
    if (!item.fixed) {
      std::swap_ranges(item.param, item.param + item.n, item.average.data());
    } else if (swapped_) {
      std::copy(item.mantissas, item.mantissas + item.n, item.held);
      for (int64_t i = 0; i < item.n; ++i) item.mantissas[i] = rounded(item.fixed[i]);
    } else {
      std::copy(item.held, item.held + item.n, item.mantissas);
    }
  }
}

std::vector<std::pair<std::string, Tensor>> ParamAverage::state() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const Item& item : items_) {
    Tensor t = item.average;
    if (item.fixed) {
      // Below 2^23 in magnitude, so a float holds the value exactly.
      t = Tensor::zeros(item.shape);
      for (int64_t i = 0; i < item.n; ++i)
        t[i] = static_cast<float>(item.fixed[i]) / kFractionScale;
    }
    out.emplace_back(average_tensor_name(item.name), t);
  }
  return out;
}

void ParamAverage::restore(const Checkpoint& ckpt) {
  for (Item& item : items_) {
    const std::string name = average_tensor_name(item.name);
    if (!item.fixed) {
      const Tensor& t = ckpt.file.get(name, item.average.shape(), ckpt.path);
      std::copy(t.data(), t.data() + t.numel(), item.average.data());
      continue;
    }
    const Tensor& t = ckpt.file.get(name, item.shape, ckpt.path);
    for (int64_t i = 0; i < item.n; ++i) {
      const float v = t[i] * kFractionScale;
      if (!(std::fabs(t[i]) <= 127) || v != std::nearbyint(v))
        throw InputError(ckpt.path + ": tensor " + name +
                         " holds a value that is not an int8 mantissa's average (|a| <= 127, " +
                         std::to_string(kFractionBits) + " fraction bits)");
      item.fixed[i] = static_cast<int32_t>(v);
    }
  }
}

TensorFile with_averages(const TensorFile& file) {
  TensorFile out = file;
  for (auto& [name, t] : out.tensors) {
    if (name.rfind("param/", 0) == 0) {
      if (const Tensor* average = file.find(average_tensor_name(name.substr(6)));
          average && average->shape() == t.shape())
        t = *average;
    } else if (name.rfind("qweight/", 0) == 0) {
      if (const Tensor* average = file.find(average_tensor_name(name.substr(8) + ".weight"));
          average && average->shape() == t.shape()) {
        Tensor m = Tensor::zeros(t.shape());
        for (int64_t i = 0; i < m.numel(); ++i) m[i] = average_mantissa((*average)[i]);
        t = m;
      }
    }
  }
  return out;
}

}  // namespace zotrain
