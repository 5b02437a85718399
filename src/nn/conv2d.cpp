#include "zotrain/nn/conv2d.h"

#include <algorithm>

#include "zotrain/core/error.h"

namespace zotrain {

kernels::Conv2dGeometry Conv2d::geometry(const Shape& in) const {
  ZT_ASSERT(in.rank == 4 && in[1] == in_);
  return kernels::Conv2dGeometry::make(in_, in[2], in[3], out_, k_, stride_, pad_);
}

std::string Conv2d::describe() const {
  return "conv2d " + std::to_string(in_) + "->" + std::to_string(out_) + " k" + std::to_string(k_) +
         " s" + std::to_string(stride_) + " p" + std::to_string(pad_);
}

Shape Conv2d::output_shape(const Shape& in) const {
  auto g = geometry(in);
  return Shape{in[0], out_, g.out_h, g.out_w};
}

std::vector<ParamSpec> Conv2d::param_specs() const {
  const int64_t fan_in = in_ * k_ * k_;
  return {{"weight", Shape{out_, in_, k_, k_}, fan_in}, {"bias", Shape{out_}, fan_in}};
}

int64_t Conv2d::thread_workspace(const kernels::Conv2dGeometry& g) {
  return std::max({kernels::conv2d_forward_work(g), kernels::conv2d_backward_data_work(g),
                   kernels::conv2d_backward_weight_work(g)});
}

size_t Conv2d::workspace_floats(const Shape& in, int threads) const {
  return static_cast<size_t>(threads) * static_cast<size_t>(thread_workspace(geometry(in)));
}

int64_t Conv2d::forward_macs(const Shape& in) const {
  auto g = geometry(in);
  return in[0] * g.out_numel() * g.patch_size();
}

void Conv2d::forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const {
  const auto g = geometry(x.shape());
  const int64_t work = thread_workspace(g);
  const float* w = param(ctx, 0).data();
  const float* b = param(ctx, 1).data();
  // Threads take blocks of images.
  parallel_for(ctx.pool, x.shape()[0], [&](int slot, int64_t n0, int64_t n1) {
    kernels::conv2d_forward(g, n1 - n0, x.data() + n0 * g.in_numel(), w, b,
                            y.data() + n0 * g.out_numel(), ctx.workspace + slot * work);
  });
}

void Conv2d::backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor& dx,
                      const ExecContext& ctx) {
  const auto g = geometry(x.shape());
  const int64_t work = thread_workspace(g);
  const int64_t batch = x.shape()[0];
  if (has_grads()) {
    // Threads take blocks of output channels and run over all images in order, so every weight
    // sums over the batch in the same order whatever the thread count.
    parallel_for(ctx.pool, out_, [&](int slot, int64_t o0, int64_t o1) {
      kernels::conv2d_backward_weight(g, o0, o1, batch, x.data(), dy.data(), grads_[0].data(),
                                      grads_[1].data(), ctx.workspace + slot * work);
    });
  }
  if (!dx.empty()) {
    const float* w = params_[0].data();
    parallel_for(ctx.pool, batch, [&](int slot, int64_t n0, int64_t n1) {
      kernels::conv2d_backward_data(g, n1 - n0, dy.data() + n0 * g.out_numel(), w,
                                    dx.data() + n0 * g.in_numel(), ctx.workspace + slot * work);
    });
  }
}

}  // namespace zotrain
