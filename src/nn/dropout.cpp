#include "nn/dropout.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace zotrain {

uint32_t dropout_threshold(double rate) {
  return static_cast<uint32_t>(std::llround(rate * 4294967296.0));
}

Dropout::Dropout(uint32_t drop_below) : drop_below_(drop_below) {}

std::string Dropout::describe() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "dropout %g", rate());
  return buf;
}

void Dropout::apply_mask(const Tensor& in, Tensor& out, const ExecContext& ctx) const {
  const auto scale = static_cast<float>(1 / (1 - rate()));
  const float* src = in.data();
  float* dst = out.data();
  // Whole Philox blocks per chunk, so chunk borders do not split a block.
  parallel_for(ctx.pool, (in.numel() + 3) / 4, [&](int64_t b0, int64_t b1) {
    for_each_dropout_element(ctx.key, drop_below_, b0 * 4, std::min(b1 * 4, in.numel()),
                             [&](int64_t i, bool kept) { dst[i] = kept ? src[i] * scale : 0.0f; });
  });
}

void Dropout::forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const {
  if (ctx.training) {
    apply_mask(x, y, ctx);
  } else if (y.data() != x.data()) {
    y.copy_from(x);
  }
}

void Dropout::backward(const Tensor&, const Tensor&, const Tensor& dy, Tensor& dx,
                       const ExecContext& ctx) {
  if (!dx.empty()) apply_mask(dy, dx, ctx);
}

}  // namespace zotrain
