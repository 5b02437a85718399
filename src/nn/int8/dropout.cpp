// Integer dropout: the f32 layer's mask (same key, same Philox words), dropped mantissas zeroed,
// exponent unchanged. The kept ones are not scaled by 1 / (1 - rate), which is no power of two:
// the next layer requantizes its output to its own range anyway, and in PointNet that layer is
// the bias-free classifier, whose argmax a common scale does not change.
#include <algorithm>

#include "nn/dropout_mask.h"
#include "qlayers.h"

namespace zotrain::int8 {

namespace {

class Dropout : public QLayer {
 public:
  explicit Dropout(uint32_t drop_below) : drop_below_(drop_below) {}
  bool in_place() const override { return true; }

  void forward(const QTensor& x, QTensor& y, const QExecContext& ctx) const override {
    mask(x, y, ctx);
  }
  void backward(const QTensor&, const QTensor&, const QTensor& dy, QTensor& dx, int64_t*,
                const QExecContext& ctx) const override {
    mask(dy, dx, ctx);
  }

 private:
  void mask(const QTensor& in, QTensor& out, const QExecContext& ctx) const {
    const int8_t* src = in.data;
    int8_t* dst = out.data;
    if (!ctx.training) {
      std::copy(src, src + in.numel(), dst);
    } else {
      for_each_dropout_element(ctx.key, drop_below_, 0, in.numel(),
                               [&](int64_t i, bool kept) { dst[i] = kept ? src[i] : int8_t{0}; });
    }
    out.exp = in.exp;
  }

  uint32_t drop_below_;
};

}  // namespace

std::unique_ptr<QLayer> make_dropout(uint32_t drop_below) {
  return std::make_unique<Dropout>(drop_below);
}

}  // namespace zotrain::int8
