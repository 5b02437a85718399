#include "zotrain/zo/activity.h"

#include "kernels/gemm.h"

namespace zotrain::zo {

void add_weighted_directions(const PerturbationSpec& spec, uint64_t seed, uint32_t tensor,
                             const float* coef, Tensor& v) {
  const int64_t rows = v.shape()[0], out = v.numel() / rows;
  for (int64_t b = 0; b < rows; ++b) {
    float* row = v.data() + b * out;
    add_perturbation(spec, seed, tensor, coef[b], row, row, b * out, (b + 1) * out);
  }
}

void linear_gradient(const Tensor& v, const Tensor& x, int64_t o0, int64_t o1, float* dw, float* db,
                     ThreadPool* pool) {
  const int64_t rows = v.shape()[0], out = v.numel() / rows, in = x.numel() / rows;
  parallel_for(pool, o1 - o0, [&](int64_t a, int64_t b) {
    kernels::linear_param_grad_f32(v.data(), out, x.data(), in, rows, o0 + a, o0 + b, false,
                                   dw + a * in, db + a);
  });
}

}  // namespace zotrain::zo
