#include "nn/flatten.h"

namespace zotrain {

namespace {
// A Network may run flatten in place (same storage in and out): nothing to move then.
void copy_unless_same(const Tensor& src, Tensor& dst) {
  if (dst.data() != src.data()) dst.copy_from(src);
}
}  // namespace

void Flatten::forward(const Tensor& x, Tensor& y, const ExecContext&) const {
  copy_unless_same(x, y);
}

void Flatten::backward(const Tensor&, const Tensor&, const Tensor& dy, Tensor& dx,
                       const ExecContext&) {
  if (!dx.empty()) copy_unless_same(dy, dx);
}

}  // namespace zotrain
