#include "models/serialize.h"

namespace zotrain {

void append_params(TensorFile& file, const Network& net) {
  for (const ParamRef& p : net.params()) file.tensors.emplace_back("param/" + p.name, p.value);
  for (const ParamRef& s : net.state()) file.tensors.emplace_back("state/" + s.name, s.value);
}

void restore_params(const TensorFile& file, const std::string& path, Network& net) {
  for (ParamRef& p : net.params())
    p.value.copy_from(file.get("param/" + p.name, p.value.shape(), path));
  for (ParamRef& s : net.state())
    s.value.copy_from(file.get("state/" + s.name, s.value.shape(), path));
}

}  // namespace zotrain
