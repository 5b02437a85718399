#include "zotrain/train/export.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <span>

#include "models/serialize.h"
#include "nn/batch_norm.h"
#include "nn/npu/npu_network.h"
#include "param_average.h"
#include "zotrain/core/error.h"
#include "zotrain/models/onnx.h"

namespace zotrain {

namespace {

// An int8-npu run's model: its program's float master weights, batch norm folded in, with the
// folded biases. The graph stays the model's: a folded batch norm becomes the identity plus the
// folded bias (gamma 1, mean 0, var 1 - eps, beta the bias), a convolution's own bias 0.
TensorFile npu_params(const Checkpoint& ckpt, const ModelSpec& spec) {
  Network net(spec.item_shape, spec.layers);
  Arena arena;
  net.allocate_parameters(arena, 1, 0);
  restore_params(ckpt.file, ckpt.path, net);
  NpuNetwork npu(net, 1);
  npu.allocate(arena);
  TensorFile out;
  append_params(out, net);
  const auto set = [&](const std::string& name, const std::function<float(int64_t)>& value) {
    for (auto& [n, t] : out.tensors)
      if (n == name) {
        t = t.clone();
        for (int64_t i = 0; i < t.numel(); ++i) t[i] = value(i);
      }
  };
  for (size_t i = 0; i < npu.params().size(); ++i) {
    const NpuParam& p = npu.params()[i];
    const Tensor* trained = ckpt.file.find("npu_master/" + std::to_string(p.param_index));
    const Tensor& master = trained ? *trained : p.master;
    if (master.numel() != p.master.numel())
      throw InputError(ckpt.path + ": tensor npu_master/" + std::to_string(p.param_index) +
                       " has another size than the model's weight");
    const std::string weight = net.params()[p.param_index].name;  // "<layer>.weight"
    const std::string layer = weight.substr(0, weight.size() - 7);
    const std::span<const float> bias = npu.folded_bias(i);
    set("param/" + weight, [&](int64_t k) { return master[k]; });
    if (p.norm.empty()) {
      set("param/" + layer + ".bias", [&](int64_t k) { return bias[k]; });
      continue;
    }
    set("param/" + layer + ".bias", [](int64_t) { return 0.0f; });
    set("param/" + p.norm + ".weight", [](int64_t) { return 1.0f; });
    set("param/" + p.norm + ".bias", [&](int64_t k) { return bias[k]; });
    set("state/" + p.norm + ".running_mean", [](int64_t) { return 0.0f; });
    set("state/" + p.norm + ".running_var", [](int64_t) { return 1.0f - BatchNorm::kEps; });
  }
  return out;
}

// The f32 parameters of a checkpoint, named as an f32 run's.
TensorFile float_params(const Checkpoint& ckpt, const ModelSpec& spec) {
  const Precision p = ckpt.meta.config.precision;
  if (p == Precision::kInt8Npu) return npu_params(ckpt, spec);
  const TensorFile file = with_averages(ckpt.file);
  if (p == Precision::kF32) return file;
  TensorFile out;
  const Network net(spec.item_shape, spec.layers);
  for (int i = 0; i < net.num_layers(); ++i) {
    if (file.find("qstate/" + std::to_string(i)))
      throw InputError(ckpt.path + ": layer " + std::to_string(i) +
                       " is an integer batch norm, which has no ONNX form here");
    for (const ParamSpec& ps : net.layer(i).param_specs()) {
      Tensor t = Tensor::zeros(ps.shape);
      const std::string layer = std::to_string(i);
      if (ps.name == "weight") {
        const Tensor& m = file.get("qweight/" + layer, ps.shape, ckpt.path);
        const Tensor& e = file.get("qexp/" + layer, Shape{1}, ckpt.path);
        for (int64_t k = 0; k < t.numel(); ++k) t[k] = std::ldexp(m[k], static_cast<int>(e[0]));
      }
      out.tensors.emplace_back("param/" + layer + "." + ps.name, t);
    }
  }
  return out;
}

}  // namespace

std::string export_onnx(const Checkpoint& ckpt, const std::string& out) {
  const CheckpointMeta& m = ckpt.meta;
  const ModelSpec spec = model_by_name(m.config.model, m.item_shape, m.num_classes);
  write_onnx(out, spec, float_params(ckpt, spec));
  char line[512];
  std::snprintf(line, sizeof line,
                "%s (%s) as ONNX, input [batch, %lld, %lld, %lld] normalized as in training "
                "((x - %.9g) / %.9g for pixels x in [0, 1])",
                m.config.model.c_str(), name_of(m.config.precision),
                static_cast<long long>(m.item_shape[0]), static_cast<long long>(m.item_shape[1]),
                static_cast<long long>(m.item_shape[2]), m.norm.mean, m.norm.std);
  std::string said = out + ": " + line;
  if (m.config.precision == Precision::kInt8)
    said +=
        "; int8 weights dequantized to f32 (the float network computes NITI's logits up to its "
        "power-of-two rescalings and their rounding)";
  if (m.config.precision == Precision::kInt8Npu)
    said +=
        "; the int8 program's float master weights, batch norm folded in (the float network "
        "computes the program's logits up to its int8 rounding)";
  return said;
}

}  // namespace zotrain
