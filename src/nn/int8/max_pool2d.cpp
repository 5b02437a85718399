// Integer max pooling: exponent unchanged, the error routed to each window's maximum.
#include "kernels/int8.h"
#include "qlayers.h"

namespace zotrain::int8 {

namespace {

class MaxPool2d : public QLayer {
 public:
  MaxPool2d(int64_t k, int64_t stride, int64_t pad) : k_(k), stride_(stride), pad_(pad) {}

  void forward(const QTensor& x, QTensor& y, const QExecContext&) const override {
    kernels::max_pool2d_s8_forward(geometry(x.shape), x.shape[0] * x.shape[1], x.data, y.data);
    y.exp = x.exp;
  }
  void backward(const QTensor& x, const QTensor&, const QTensor& dy, QTensor& dx, int64_t*,
                const QExecContext&) const override {
    kernels::max_pool2d_s8_backward(geometry(x.shape), x.shape[0] * x.shape[1], x.data, dy.data,
                                    dx.data);
    dx.exp = dy.exp;
  }

 private:
  kernels::Pool2dGeometry geometry(const Shape& in) const {
    return kernels::Pool2dGeometry::make(in[2], in[3], k_, stride_, pad_);
  }
  int64_t k_, stride_, pad_;
};

}  // namespace

std::unique_ptr<QLayer> make_max_pool2d(int64_t kernel, int64_t stride, int64_t pad) {
  return std::make_unique<MaxPool2d>(kernel, stride, pad);
}

}  // namespace zotrain::int8
