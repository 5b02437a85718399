// Integer flatten: the same mantissas seen as [batch, features]; runs in place.
#include "qlayers.h"

namespace zotrain::int8 {

namespace {

class Flatten : public QLayer {
 public:
  bool in_place() const override { return true; }

  void forward(const QTensor& x, QTensor& y, const QExecContext&) const override {
    if (y.data != x.data)
      for (int64_t i = 0; i < x.numel(); ++i) y.data[i] = x.data[i];
    y.exp = x.exp;
  }
  void backward(const QTensor&, const QTensor&, const QTensor& dy, QTensor& dx, int64_t*,
                const QExecContext&) const override {
    if (dx.data != dy.data)
      for (int64_t i = 0; i < dy.numel(); ++i) dx.data[i] = dy.data[i];
    dx.exp = dy.exp;
  }
};

}  // namespace

std::unique_ptr<QLayer> make_flatten() {
  return std::make_unique<Flatten>();
}

}  // namespace zotrain::int8
