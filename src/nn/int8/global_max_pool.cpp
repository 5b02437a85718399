// Integer max over the points (PointNet's symmetric function): exponent unchanged, the error
// routed to each channel's maximum.
#include "kernels/global_max_pool.h"

#include "qlayers.h"

namespace zotrain::int8 {

namespace {

class GlobalMaxPool : public QLayer {
 public:
  void forward(const QTensor& x, QTensor& y, const QExecContext&) const override {
    kernels::global_max_pool_forward(x.data, y.numel(), x.numel() / y.numel(), y.data);
    y.exp = x.exp;
  }
  void backward(const QTensor& x, const QTensor&, const QTensor& dy, QTensor& dx, int64_t*,
                const QExecContext&) const override {
    kernels::global_max_pool_backward(x.data, dy.data, dy.numel(), x.numel() / dy.numel(), dx.data);
    dx.exp = dy.exp;
  }
};

}  // namespace

std::unique_ptr<QLayer> make_global_max_pool() {
  return std::make_unique<GlobalMaxPool>();
}

}  // namespace zotrain::int8
