// What global max and average pooling share: one output per channel over all its positions,
// [N, C, H, W] (or [N, C, ...]) to [N, C], threads taking blocks of the N*C channels.
#pragma once

#include <functional>

#include "zotrain/nn/layer.h"

namespace zotrain {

class GlobalPool : public Layer {
 public:
  Shape output_shape(const Shape& in) const override { return Shape{in[0], in[1]}; }
  int64_t forward_macs(const Shape& in) const override { return in.numel(); }

 protected:
  // Runs fn(r, positions) for each channel r of the N*C channels of an input `in`; channel r's
  // positions are the elements [r * positions, (r + 1) * positions).
  void for_each_channel(const Shape& in, const ExecContext& ctx,
                        FunctionRef<void(int64_t r, int64_t positions)> fn) const;
};

}  // namespace zotrain
