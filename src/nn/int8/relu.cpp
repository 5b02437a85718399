// Integer ReLU: max(m, 0) on the mantissas, exponent unchanged; runs in place.
#include "kernels/int8.h"
#include "qlayers.h"

namespace zotrain::int8 {

namespace {

class ReLU : public QLayer {
 public:
  bool in_place() const override { return true; }
  bool backward_needs_output() const override { return true; }

  void forward(const QTensor& x, QTensor& y, const QExecContext&) const override {
    kernels::relu_s8(x.data, y.data, x.numel());
    y.exp = x.exp;
  }
  void backward(const QTensor&, const QTensor& y, const QTensor& dy, QTensor& dx, int64_t*,
                const QExecContext&) const override {
    kernels::relu_s8_backward(y.data, dy.data, dx.data, dy.numel());
    dx.exp = dy.exp;
  }
};

}  // namespace

std::unique_ptr<QLayer> make_relu() {
  return std::make_unique<ReLU>();
}

}  // namespace zotrain::int8
