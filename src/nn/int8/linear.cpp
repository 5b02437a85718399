// Integer fully connected layer: y = x W^T with W [out, in].
#include <algorithm>

#include "kernels/int8.h"
#include "qlayers.h"

namespace zotrain::int8 {

namespace {

class Linear : public QLayer {
 public:
  Linear(int64_t in, int64_t out) : in_(in), out_(out) {}

  Shape weight_shape() const override { return Shape{out_, in_}; }
  // Blocks of rows of the output or input error: all rows, or as many as the weight gradient's
  // accumulators would hold (its blocks, whether the layer has a gradient or not).
  int64_t acc_elems(const Shape& x) const override {
    const int64_t width = std::max(out_, in_);
    return std::max(width, std::min(x[0] * width, out_ * in_));
  }
  int64_t grad_acc_elems() const override { return out_ * in_; }
  int64_t stage_elems(const Shape& x) const override { return x[0] * std::max(out_, in_); }
  // The forward's packed weights.
  int64_t work_bytes(const Shape&) const override {
    return kernels::linear_s8_work_bytes(out_, in_);
  }

  void forward(const QTensor& x, QTensor& y, const QExecContext& ctx) const override {
    const int8_t* w = weight_data(ctx);
    const int64_t block = row_block(x.shape, out_, ctx);
    // The pass's blocks take the same w: each worker packs it once.
    const uint64_t key = kernels::new_weights_key();
    const int s = requantize_rows(x.shape[0], out_, block, ctx, y.data,
                                  [&](int64_t r0, int64_t r1, int32_t* acc, void* work) {
                                    kernels::linear_s8_forward(
                                        r1 - r0, out_, in_, x.data + r0 * in_, w, acc, work, key);
                                  });
    y.exp = x.exp + weight_.exp + s;
  }

  void backward(const QTensor& x, const QTensor&, const QTensor& dy, QTensor& dx, int64_t* grad,
                const QExecContext& ctx) const override {
    const int64_t rows = x.shape[0];
    if (dx.data) {
      const int64_t block = row_block(x.shape, in_, ctx);
      const int s = requantize_rows(
          rows, in_, block, ctx, dx.data, [&](int64_t r0, int64_t r1, int32_t* acc, void*) {
            kernels::gemm_s8(false, false, r1 - r0, in_, out_, dy.data + r0 * out_, out_,
                             weight_.data, in_, acc, in_, false);
          });
      dx.exp = dy.exp + weight_.exp + s;
    }
    if (grad) {
      // Blocks of output rows on the pool's workers: disjoint rows of the accumulators (which
      // hold a whole weight) and of grad, exact integer sums.
      parallel_for(ctx.pool, out_, [&](int64_t o0, int64_t o1) {
        kernels::gemm_s8(true, false, o1 - o0, in_, rows, dy.data + o0, out_, x.data, in_,
                         ctx.acc + o0 * in_, in_, false);
        for (int64_t i = o0 * in_; i < o1 * in_; ++i) grad[i] += ctx.acc[i];
      });
    }
  }

 private:
  // Rows of `width` accumulators per block: as many as a worker's accumulators hold, but no
  // more than a worker's share of the batch, so that every worker gets rows.
  int64_t row_block(const Shape& x, int64_t width, const QExecContext& ctx) const {
    const int64_t workers = ctx.pool ? ctx.pool->size() : 1;
    const int64_t share = (x[0] + workers - 1) / workers;
    return std::max<int64_t>(1, std::min(acc_elems(x) / width, share));
  }

  int64_t in_, out_;
};

}  // namespace

std::unique_ptr<QLayer> make_linear(int64_t in_features, int64_t out_features) {
  return std::make_unique<Linear>(in_features, out_features);
}

}  // namespace zotrain::int8
