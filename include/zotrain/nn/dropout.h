// Dropout: in a training pass each element is zeroed with probability `rate` and the others are
// scaled by 1 / (1 - rate); an evaluation pass is the identity. The mask is not stored: element
// i's fate is a Philox word of (ctx.key, i), so every pass of a training step (the perturbed
// passes of zeroth-order training and the head's backward) sees the same mask, which backward
// recomputes. PointNet drops 30 % of its 256 features before the classifier.
#pragma once

#include <cstdint>

#include "zotrain/core/rng.h"
#include "zotrain/nn/layer.h"

namespace zotrain {

// Element i of a pass keyed `key` is dropped when its Philox word is below `drop_below`
// (rate * 2^32). Calls keep(i, kept) for i in [begin, end); integer only, shared with the int8
// layer.
template <typename Keep>
void for_each_dropout_element(uint64_t key, uint32_t drop_below, int64_t begin, int64_t end,
                              Keep keep) {
  for (int64_t block = begin / 4; block * 4 < end; ++block) {
    const auto b = static_cast<uint64_t>(block);
    const Philox4x32 words =
        philox4x32({static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), 0, 0}, key);
    for (int64_t k = 0; k < 4; ++k) {
      const int64_t i = block * 4 + k;
      if (i >= begin && i < end) keep(i, words[k] >= drop_below);
    }
  }
}

// rate * 2^32, for rate in [0, 1).
uint32_t dropout_threshold(double rate);

class Dropout : public Layer {
 public:
  explicit Dropout(double rate);
  std::string describe() const override;
  Shape output_shape(const Shape& in) const override { return in; }
  bool in_place() const override { return true; }
  void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                const ExecContext& ctx) override;
  double rate() const { return rate_; }

 private:
  // y = x * mask / (1 - rate) over the whole tensor (dy to dx in backward).
  void apply_mask(const Tensor& in, Tensor& out, const ExecContext& ctx) const;

  double rate_;
  uint32_t drop_below_;
};

}  // namespace zotrain
