// Integer 2-D convolution, NCHW, no bias.
#include <algorithm>

#include "kernels/int8.h"
#include "qlayers.h"

namespace zotrain::int8 {

namespace {

using kernels::Conv2dGeometry;

class Conv2d : public QLayer {
 public:
  explicit Conv2d(const Conv2dGeometry& g) : g_(g) {}

  Shape weight_shape() const override { return Shape{g_.out_c, g_.in_c, g_.k, g_.k}; }
  // The outputs of a block of images, or one image's input error.
  int64_t acc_elems(const Shape& x) const override {
    return std::max(block_images(x) * g_.out_numel(), g_.in_numel());
  }
  int64_t stage_elems(const Shape& x) const override {
    return x[0] * std::max(g_.out_numel(), g_.in_numel());
  }
  int64_t work_bytes(const Shape&) const override { return kernels::conv2d_s8_work_bytes(g_); }
  int64_t forward_work_bytes(const Shape&) const override {
    return kernels::conv2d_s8_forward_work_bytes(g_);
  }

  // The pooled output of a block of images follows the block's accumulators.
  int64_t max_pooled_acc_elems(const Shape& x, const kernels::Pool2dGeometry& pool) const override {
    return block_images(x) * g_.out_numel() + g_.out_c * pool.out_plane();
  }
  int64_t max_pooled_stage_elems(const Shape& x,
                                 const kernels::Pool2dGeometry& pool) const override {
    return x[0] * g_.out_c * pool.out_plane();
  }

  void forward(const QTensor& x, QTensor& y, const QExecContext& ctx) const override {
    run_forward(x, y, ctx, nullptr);
  }
  void forward_max_pooled(const QTensor& x, const kernels::Pool2dGeometry& pool, QTensor& y,
                          const QExecContext& ctx) const override {
    const RowPooling pooling{pool, g_.out_c, kernels::conv2d_s8_pools(g_, pool)};
    run_forward(x, y, ctx, &pooling);
  }

  void backward(const QTensor& x, const QTensor&, const QTensor& dy, QTensor& dx, int64_t* grad,
                const QExecContext& ctx) const override {
    const int64_t images = x.shape[0];
    if (dx.data) {
      const int s = requantize_rows(images, g_.in_numel(), backward_block_images(x.shape), ctx,
                                    dx.data, [&](int64_t n0, int64_t n1, int32_t* acc, void* work) {
                                      kernels::conv2d_s8_backward_data(
                                          g_, n1 - n0, dy.data + n0 * g_.out_numel(), weight_.data,
                                          acc, work);
                                    });
      dx.exp = dy.exp + weight_.exp + s;
    }
    if (grad) kernels::conv2d_s8_backward_weight(g_, images, x.data, dy.data, grad, ctx.work);
  }

 private:
  void run_forward(const QTensor& x, QTensor& y, const QExecContext& ctx,
                   const RowPooling* pool) const {
    const int8_t* w = weight_data(ctx);
    // The pass's blocks take the same w: each worker packs it once.
    const uint64_t key = kernels::new_weights_key();
    const int s = requantize_rows(
        x.shape[0], g_.out_numel(), block_images(x.shape), ctx, y.data,
        [&](int64_t n0, int64_t n1, int32_t* acc, void* work) {
          const int8_t* xn = x.data + n0 * g_.in_numel();
          if (pool && pool->fused)
            kernels::conv2d_s8_forward_max_pooled(g_, pool->g, n1 - n0, xn, w, acc, ctx.ranges + n0,
                                                  work, key);
          else
            kernels::conv2d_s8_forward(g_, n1 - n0, xn, w, acc, work, key);
        },
        pool);
    y.exp = x.exp + weight_.exp + s;
  }

  // Images per block of the forward pass.
  static int64_t block_images(const Shape& x) { return std::min<int64_t>(x[0], 8); }
  // Images per block of the input error: as many as the forward's accumulators hold (so the
  // plan does not grow), at least one.
  int64_t backward_block_images(const Shape& x) const {
    return std::max<int64_t>(1, block_images(x) * g_.out_numel() / g_.in_numel());
  }

  Conv2dGeometry g_;
};

}  // namespace

std::unique_ptr<QLayer> make_conv2d(const Shape& in, const LayerSpec& spec) {
  return std::make_unique<Conv2d>(
      Conv2dGeometry::make(in[1], in[2], in[3], spec.out, spec.kernel, spec.stride, spec.pad));
}

}  // namespace zotrain::int8
