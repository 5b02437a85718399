// Integer fully connected layer: y = x W^T with W [out, in].
#include "qlayers.h"
#include "zotrain/kernels/int8.h"

namespace zotrain::int8 {

namespace {

using kernels::Rounding;

class Linear : public QLayer {
 public:
  Linear(int64_t in, int64_t out) : in_(in), out_(out) {}

  Shape weight_shape() const override { return Shape{out_, in_}; }
  int64_t acc_elems(const Shape& x) const override {
    const int64_t rows = x[0];
    int64_t n = rows * out_;
    if (rows * in_ > n) n = rows * in_;
    return n > out_ * in_ ? n : out_ * in_;
  }

  void forward(const QTensor& x, QTensor& y, const QExecContext& ctx) const override {
    const int64_t rows = x.shape[0];
    kernels::gemm_s8(false, true, rows, out_, in_, x.data, in_, weight_data(ctx), in_, ctx.acc,
                     out_, false);
    const int s =
        kernels::requantize(ctx.acc, rows * out_, kMantissaBits, Rounding::kNearest, y.data);
    y.exp = x.exp + weight_.exp + s;
  }

  void backward(const QTensor& x, const QTensor&, const QTensor& dy, QTensor& dx, int64_t* grad,
                const QExecContext& ctx) const override {
    const int64_t rows = x.shape[0];
    if (dx.data) {
      kernels::gemm_s8(false, false, rows, in_, out_, dy.data, out_, weight_.data, in_, ctx.acc,
                       in_, false);
      const int s =
          kernels::requantize(ctx.acc, rows * in_, kMantissaBits, Rounding::kNearest, dx.data);
      dx.exp = dy.exp + weight_.exp + s;
    }
    if (grad) {
      kernels::gemm_s8(true, false, out_, in_, rows, dy.data, out_, x.data, in_, ctx.acc, in_,
                       false);
      for (int64_t i = 0; i < out_ * in_; ++i) grad[i] += ctx.acc[i];
    }
  }

 private:
  int64_t in_, out_;
};

}  // namespace

std::unique_ptr<QLayer> make_linear(int64_t in_features, int64_t out_features) {
  return std::make_unique<Linear>(in_features, out_features);
}

}  // namespace zotrain::int8
