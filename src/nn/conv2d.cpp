#include "zotrain/nn/conv2d.h"

#include "parallel_slots.h"
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

size_t Conv2d::workspace_floats(const Shape& in, int threads) const {
  return static_cast<size_t>(threads) * static_cast<size_t>(geometry(in).col_floats());
}

int64_t Conv2d::forward_macs(const Shape& in) const {
  auto g = geometry(in);
  return in[0] * g.out_numel() * g.patch_size();
}

void Conv2d::forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const {
  const auto g = geometry(x.shape());
  const float* w = param(ctx, 0).data();
  const float* b = param(ctx, 1).data();
  // Threads take blocks of images, each with its own patch matrix.
  parallel_slots(ctx, x.shape()[0], [&](int slot, int64_t n0, int64_t n1) {
    float* col = ctx.workspace + slot * g.col_floats();
    for (int64_t n = n0; n < n1; ++n)
      kernels::conv2d_forward(g, x.data() + n * g.in_numel(), w, b, y.data() + n * g.out_numel(),
                              col);
  });
}

void Conv2d::backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor& dx,
                      const ExecContext& ctx) {
  const auto g = geometry(x.shape());
  const int64_t batch = x.shape()[0];
  if (has_grads()) {
    float* dw = grads_[0].data();
    float* db = grads_[1].data();
    // Threads take blocks of output channels and run over all images in order, so every weight
    // sums over the batch in the same order whatever the thread count. Each thread builds the
    // patch matrices it needs itself.
    parallel_slots(ctx, out_, [&](int slot, int64_t o0, int64_t o1) {
      auto part = g;
      part.out_c = o1 - o0;
      float* col = ctx.workspace + slot * g.col_floats();
      for (int64_t n = 0; n < batch; ++n)
        kernels::conv2d_backward_weight(part, x.data() + n * g.in_numel(),
                                        dy.data() + n * g.out_numel() + o0 * g.out_plane(),
                                        dw + o0 * g.patch_size(), db + o0, col);
    });
  }
  if (!dx.empty()) {
    const float* w = params_[0].data();
    parallel_slots(ctx, batch, [&](int slot, int64_t n0, int64_t n1) {
      float* col = ctx.workspace + slot * g.col_floats();
      for (int64_t n = n0; n < n1; ++n)
        kernels::conv2d_backward_data(g, dy.data() + n * g.out_numel(), w,
                                      dx.data() + n * g.in_numel(), col);
    });
  }
}

}  // namespace zotrain
