#include "nn/max_pool2d.h"

namespace zotrain {

void MaxPool2d::forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const {
  for_plane_blocks(x.shape(), ctx, [&](const kernels::Pool2dGeometry& g, int64_t p, int64_t n) {
    kernels::max_pool2d_forward(g, n, x.data() + p * g.in_plane(), y.data() + p * g.out_plane());
  });
}

void MaxPool2d::backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor& dx,
                         const ExecContext& ctx) {
  if (dx.empty()) return;
  for_plane_blocks(x.shape(), ctx, [&](const kernels::Pool2dGeometry& g, int64_t p, int64_t n) {
    kernels::max_pool2d_backward(g, n, x.data() + p * g.in_plane(), dy.data() + p * g.out_plane(),
                                 dx.data() + p * g.in_plane());
  });
}

void MaxPool2d::backward_through_relu(const Tensor& x, const Tensor& dy, Tensor& dx, float cap,
                                      const ExecContext& ctx) const {
  for_plane_blocks(x.shape(), ctx, [&](const kernels::Pool2dGeometry& g, int64_t p, int64_t n) {
    kernels::max_pool2d_backward_relu(g, n, x.data() + p * g.in_plane(),
                                      dy.data() + p * g.out_plane(), dx.data() + p * g.in_plane(),
                                      cap);
  });
}

}  // namespace zotrain
