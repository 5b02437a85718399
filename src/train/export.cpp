#include "zotrain/train/export.h"

#include <cmath>
#include <cstdio>

#include "zotrain/core/error.h"
#include "zotrain/models/onnx.h"

namespace zotrain {

namespace {

// The f32 parameters of a checkpoint, named as an f32 run's.
TensorFile float_params(const Checkpoint& ckpt, const ModelSpec& spec) {
  const Precision p = ckpt.meta.config.precision;
  if (p == Precision::kF32) return ckpt.file;
  if (p == Precision::kInt8Npu)
    throw InputError(ckpt.path +
                     ": an int8-npu run's trained weights are its folded program's "
                     "(batch norm folded in); exporting them is not supported yet");
  TensorFile out;
  const Network net(spec.item_shape, spec.layers);
  for (int i = 0; i < net.num_layers(); ++i) {
    if (ckpt.file.find("qstate/" + std::to_string(i)))
      throw InputError(ckpt.path + ": layer " + std::to_string(i) +
                       " is an integer batch norm, which has no ONNX form here");
    for (const ParamSpec& ps : net.layer(i).param_specs()) {
      Tensor t = Tensor::zeros(ps.shape);
      const std::string layer = std::to_string(i);
      if (ps.name == "weight") {
        const Tensor& m = ckpt.file.get("qweight/" + layer, ps.shape, ckpt.path);
        const Tensor& e = ckpt.file.get("qexp/" + layer, Shape{1}, ckpt.path);
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
  return said;
}

}  // namespace zotrain
