#include "zotrain/nn/layer_spec.h"

#include "nn/dropout.h"
#include "zotrain/core/error.h"

namespace zotrain {

LayerSpec LayerSpec::dropout(double rate) {
  if (!(rate >= 0 && rate < 1))
    ZT_THROW(InputError("dropout rate must be in [0, 1), got " + std::to_string(rate)));
  LayerSpec s{Op::kDropout};
  s.drop_below = dropout_threshold(rate);
  return s;
}

LayerSpec LayerSpec::residual(std::vector<LayerSpec> main, std::vector<LayerSpec> shortcut,
                              bool post_relu) {
  LayerSpec s{Op::kResidual};
  s.main = std::move(main);
  s.shortcut = std::move(shortcut);
  s.post_relu = post_relu;
  return s;
}

}  // namespace zotrain
