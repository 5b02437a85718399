#include "step_split.h"

#include <string>

#include "zotrain/core/error.h"

namespace zotrain {

namespace {

bool mixes_rows(const LayerSpec& s) {
  if (s.op == Op::kBatchNorm || s.op == Op::kDropout) return true;
  for (const auto* chain : {&s.main, &s.shortcut})
    for (const LayerSpec& c : *chain)
      if (mixes_rows(c)) return true;
  return false;
}

}  // namespace

void check_rows_apart(const Network& net, int first) {
  for (int i = first; i < net.num_layers(); ++i)
    if (mixes_rows(net.spec(i)))
      throw InputError("distributed = data runs each rank's rows of a batch apart, but layer " +
                       std::to_string(i) + " (" + net.layer(i).describe() +
                       ") mixes or numbers the rows of a training pass (batch norm, dropout); "
                       "use distributed = directions");
}

}  // namespace zotrain
