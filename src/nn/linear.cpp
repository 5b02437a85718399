#include "nn/linear.h"

#include "kernels/gemm.h"

namespace zotrain {

std::string Linear::describe() const {
  return "linear " + std::to_string(in_) + "->" + std::to_string(out_);
}

std::vector<ParamSpec> Linear::param_specs() const {
  return {{"weight", Shape{out_, in_}, in_}, {"bias", Shape{out_}, in_}};
}

void Linear::forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const {
  forward_rows(x, y, 0, out_, ctx);
}

void Linear::forward_rows(const Tensor& x, Tensor& y, int64_t o0, int64_t o1,
                          const ExecContext& ctx) const {
  const float* w = param(ctx, 0).data();
  const float* b = param(ctx, 1).data();
  const int64_t batch = x.shape()[0], n = o1 - o0;
  // Threads take blocks of batch rows. Each output is its bias plus one dot product over in_,
  // summed in the same order for any block of features.
  parallel_for(ctx.pool, batch, [&](int64_t r0, int64_t r1) {
    float* yr = y.data() + r0 * out_ + o0;
    for (int64_t r = 0; r < r1 - r0; ++r)
      for (int64_t o = 0; o < n; ++o) yr[r * out_ + o] = b[o];
    kernels::gemm_f32(false, true, r1 - r0, n, in_, 1.0f, x.data() + r0 * in_, in_, w, in_, 1.0f,
                      yr, out_);
  });
}

void Linear::backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor& dx,
                      const ExecContext& ctx) {
  int64_t batch = x.shape()[0];
  if (has_grads()) {
    float* dw = grads_[0].data();
    float* db = grads_[1].data();
    // Threads take blocks of output features: the same bits whatever the thread count.
    parallel_for(ctx.pool, out_, [&](int64_t o0, int64_t o1) {
      kernels::linear_param_grad_f32(dy.data(), out_, x.data(), in_, batch, o0, o1, true,
                                     dw + o0 * in_, db + o0);
    });
  }
  if (!dx.empty()) {
    const float* w = params_[0].data();
    parallel_for(ctx.pool, batch, [&](int64_t r0, int64_t r1) {
      kernels::gemm_f32(false, false, r1 - r0, in_, out_, 1.0f, dy.data() + r0 * out_, out_, w, in_,
                        0.0f, dx.data() + r0 * in_, in_);
    });
  }
}

}  // namespace zotrain
