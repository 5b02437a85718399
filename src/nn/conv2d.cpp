#include "nn/conv2d.h"

#include <algorithm>

#include "zotrain/core/error.h"
#include "zotrain/kernels/pool.h"

namespace zotrain {

kernels::Conv2dGeometry Conv2d::geometry(const Shape& in) const {
  ZT_ASSERT(in.rank == 4 && in[1] == in_ && in_ % groups_ == 0 && out_ % groups_ == 0);
  return kernels::Conv2dGeometry::make(in_ / groups_, in[2], in[3], out_ / groups_, k_, stride_,
                                       pad_);
}

// The work splits into units: with one group an image, which one kernel call covers many of;
// with more a group of an image, one call each (the kernels step from one image to the next by
// one group's channels), so that threads split batch x groups even for small batches.
int64_t Conv2d::units(int64_t batch) const {
  return batch * groups_;
}

namespace {
// Calls call(slot, u0, u1) for runs of units [0, units) over the pool's threads: runs of whole
// `batch`-image products from unit 0 on (one group only; batch 0: any split), so that a kernel
// computing that many images as one product sees the same products whatever the thread count.
template <class Call>
void parallel_units(ThreadPool* pool, int64_t units, int64_t batch, Call call) {
  if (batch <= 1) return parallel_for(pool, units, call);
  parallel_for(pool, (units + batch - 1) / batch, [&](int slot, int64_t b0, int64_t b1) {
    call(slot, b0 * batch, std::min(units, b1 * batch));
  });
}
}  // namespace

// Calls call(n, images, group) to cover units [u0, u1) in order.
template <class Call>
void Conv2d::for_each_block(int64_t u0, int64_t u1, Call call) const {
  if (groups_ == 1) return call(u0, u1 - u0, int64_t{0});
  for (int64_t u = u0; u < u1; ++u) call(u / groups_, int64_t{1}, u % groups_);
}

// Groups of an image one kernel call takes (1: a call per group, or one group only).
int64_t Conv2d::group_run(const kernels::Conv2dGeometry& g) const {
  return groups_ == 1 ? 1 : kernels::conv2d_groups_per_call(g);
}

// Calls call(n, j, count) for runs of up to `run` consecutive groups j.. of image n that cover
// units [u0, u1) in order (each group's results are the same whatever its run).
template <class Call>
void Conv2d::for_each_group_run(int64_t u0, int64_t u1, int64_t run, Call call) const {
  for (int64_t u = u0; u < u1;) {
    const int64_t n = u / groups_, j = u % groups_, count = std::min({run, groups_ - j, u1 - u});
    call(n, j, count);
    u += count;
  }
}

std::string Conv2d::describe() const {
  return "conv2d " + std::to_string(in_) + "->" + std::to_string(out_) + " k" + std::to_string(k_) +
         " s" + std::to_string(stride_) + " p" + std::to_string(pad_) +
         (groups_ == 1 ? "" : " g" + std::to_string(groups_)) + (bias_ ? "" : " nobias");
}

Shape Conv2d::output_shape(const Shape& in) const {
  auto g = geometry(in);
  return Shape{in[0], out_, g.out_h, g.out_w};
}

std::vector<ParamSpec> Conv2d::param_specs() const {
  const int64_t fan_in = in_ / groups_ * k_ * k_;
  std::vector<ParamSpec> specs = {{"weight", Shape{out_, in_ / groups_, k_, k_}, fan_in}};
  if (bias_) specs.push_back({"bias", Shape{out_}, fan_in});
  return specs;
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
  return in[0] * groups_ * g.out_numel() * g.patch_size();
}

// Offsets of image n and group j: x and dx advance by in_ channels per image and a group's
// channels per group, y and dy likewise by out_, weights and bias by a group's output channels.
void Conv2d::forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const {
  const auto g = geometry(x.shape());
  const int64_t work = thread_workspace(g);
  const float* w = param(ctx, 0).data();
  const float* b = bias_ ? param(ctx, 1).data() : nullptr;
  const int64_t batch = groups_ == 1 ? kernels::conv2d_forward_batch(g) : 0;
  const int64_t run = group_run(g);
  parallel_units(ctx.pool, units(x.shape()[0]), batch, [&](int slot, int64_t u0, int64_t u1) {
    if (run > 1)
      return for_each_group_run(u0, u1, run, [&](int64_t n, int64_t j, int64_t count) {
        kernels::conv2d_forward_grouped(
            g, count, x.data() + (n * groups_ + j) * g.in_numel(), w + j * g.out_c * g.patch_size(),
            b ? b + j * g.out_c : nullptr, y.data() + (n * groups_ + j) * g.out_numel(),
            ctx.workspace + slot * work);
      });
    for_each_block(u0, u1, [&](int64_t n, int64_t images, int64_t j) {
      kernels::conv2d_forward(g, images, x.data() + (n * groups_ + j) * g.in_numel(),
                              w + j * g.out_c * g.patch_size(), b ? b + j * g.out_c : nullptr,
                              y.data() + (n * groups_ + j) * g.out_numel(),
                              ctx.workspace + slot * work);
    });
  });
}

// Channels [o0, o1) of each image: the kernels step from one image to the next by the
// geometry's channels, so a block of channels takes one call per image.
void Conv2d::forward_rows(const Tensor& x, Tensor& y, int64_t o0, int64_t o1,
                          const ExecContext& ctx) const {
  ZT_ASSERT(groups_ == 1 && 0 <= o0 && o0 < o1 && o1 <= out_);
  const auto whole = geometry(x.shape());
  auto g = whole;
  g.out_c = o1 - o0;
  const int64_t work = thread_workspace(whole);
  const float* w = param(ctx, 0).data();
  const float* b = bias_ ? param(ctx, 1).data() : nullptr;
  parallel_for(ctx.pool, x.shape()[0], [&](int slot, int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n)
      kernels::conv2d_forward(g, 1, x.data() + n * g.in_numel(), w, b,
                              y.data() + n * whole.out_numel() + o0 * g.out_plane(),
                              ctx.workspace + slot * work);
  });
}

// Blocks of about 16K floats (64 KB) of unpooled output, which stay in L2 (512 KB on the machine
// of docs/benchmarks.md) with the block's input; 32K measured no faster on LeNet-5.
int64_t Conv2d::pooled_block_images(const kernels::Conv2dGeometry& g) {
  constexpr int64_t kBlockFloats = 16 * 1024;
  return std::max<int64_t>(1, kBlockFloats / g.out_numel());
}

int64_t Conv2d::pooled_thread_workspace(const kernels::Conv2dGeometry& g) {
  return kernels::conv2d_forward_work(g) + pooled_block_images(g) * g.out_numel();
}

size_t Conv2d::max_pooled_workspace_floats(const Shape& in, const kernels::Pool2dGeometry&,
                                           int threads) const {
  if (groups_ != 1) return 0;
  return static_cast<size_t>(threads) * static_cast<size_t>(pooled_thread_workspace(geometry(in)));
}

// Each thread convolves a block of its images into its scratch, then pools the block into y.
void Conv2d::forward_max_pooled(const Tensor& x, const kernels::Pool2dGeometry& pool, Tensor& y,
                                const ExecContext& ctx) const {
  ZT_ASSERT(groups_ == 1);
  const auto g = geometry(x.shape());
  const int64_t work = pooled_thread_workspace(g);
  // A kernel taking images in products (conv2d_forward_batch) gets one at a time: the threads'
  // blocks start anywhere.
  const int64_t block = kernels::conv2d_forward_batch(g) ? 1 : pooled_block_images(g);
  const float* w = param(ctx, 0).data();
  const float* b = bias_ ? param(ctx, 1).data() : nullptr;
  parallel_for(ctx.pool, x.shape()[0], [&](int slot, int64_t n0, int64_t n1) {
    float* conv_work = ctx.workspace + slot * work;
    float* unpooled = conv_work + kernels::conv2d_forward_work(g);
    for (int64_t n = n0; n < n1; n += block) {
      const int64_t images = std::min(block, n1 - n);
      kernels::conv2d_forward(g, images, x.data() + n * g.in_numel(), w, b, unpooled, conv_work);
      kernels::max_pool2d_forward(pool, images * g.out_c, unpooled,
                                  y.data() + n * g.out_c * pool.out_plane());
    }
  });
}

void Conv2d::backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor& dx,
                      const ExecContext& ctx) {
  const auto g = geometry(x.shape());
  const int64_t work = thread_workspace(g);
  const int64_t batch = x.shape()[0];
  const int64_t run = group_run(g);
  if (has_grads()) {
    // Threads take blocks of output channels and run over all images in order, so every weight
    // sums over the batch in the same order whatever the thread count. A block may span groups.
    parallel_for(ctx.pool, out_, [&](int slot, int64_t o0, int64_t o1) {
      // Runs of groups (of one output channel each) within [o0, o1), image after image.
      if (run > 1) {  // depthwise: group j is output channel j
        for (int64_t n = 0; n < batch; ++n)
          for (int64_t j = o0; j < o1; j += run) {
            const int64_t count = std::min(run, o1 - j);
            kernels::conv2d_backward_weight_grouped(
                g, count, x.data() + (n * groups_ + j) * g.in_numel(),
                dy.data() + (n * groups_ + j) * g.out_numel(),
                grads_[0].data() + j * g.patch_size(), bias_ ? grads_[1].data() + j : nullptr,
                ctx.workspace + slot * work);
          }
        return;
      }
      for_each_block(0, units(batch), [&](int64_t n, int64_t images, int64_t j) {
        const int64_t first = j * g.out_c;  // the group's first output channel
        const int64_t lo = std::max(o0, first), hi = std::min(o1, first + g.out_c);
        if (lo >= hi) return;
        kernels::conv2d_backward_weight(
            g, lo - first, hi - first, images, x.data() + (n * groups_ + j) * g.in_numel(),
            dy.data() + (n * groups_ + j) * g.out_numel(),
            grads_[0].data() + first * g.patch_size(), bias_ ? grads_[1].data() + first : nullptr,
            ctx.workspace + slot * work);
      });
    });
  }
  if (!dx.empty()) {
    const float* w = params_[0].data();
    const int64_t products = groups_ == 1 ? kernels::conv2d_backward_data_batch(g) : 0;
    parallel_units(ctx.pool, units(batch), products, [&](int slot, int64_t u0, int64_t u1) {
      if (run > 1)
        return for_each_group_run(u0, u1, run, [&](int64_t n, int64_t j, int64_t count) {
          kernels::conv2d_backward_data_grouped(
              g, count, dy.data() + (n * groups_ + j) * g.out_numel(),
              w + j * g.out_c * g.patch_size(), dx.data() + (n * groups_ + j) * g.in_numel(),
              ctx.workspace + slot * work);
        });
      for_each_block(u0, u1, [&](int64_t n, int64_t images, int64_t j) {
        kernels::conv2d_backward_data(g, images, dy.data() + (n * groups_ + j) * g.out_numel(),
                                      w + j * g.out_c * g.patch_size(),
                                      dx.data() + (n * groups_ + j) * g.in_numel(),
                                      ctx.workspace + slot * work);
      });
    });
  }
}

}  // namespace zotrain
