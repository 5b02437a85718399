// Convolution. The forward pass and, for stride 1, the weight gradient run the register-tiled
// kernels of the active instruction set, which read the image in place of a patch matrix; the
// input gradient is a forward pass too for stride 1. Other strides go through patch matrices
// (im2col, col2im) and gemm_f32. A convolution of one channel to one (a depthwise group) runs
// direct loops instead: the tiles would fill all but one of their channel rows or columns with
// zeros.
#include "zotrain/kernels/conv2d.h"

#include <algorithm>

#include "conv_walk.h"
#include "kernel_set.h"
#include "zotrain/kernels/gemm.h"

namespace zotrain::kernels {

namespace {

// The largest scratch of a kernel over the instruction sets compiled in, so that a workspace
// sized once serves whichever set is active.
int64_t work_any_isa(int64_t (*KernelSet::*work)(const Conv2dGeometry&), const Conv2dGeometry& g) {
  int64_t floats = (kPortableKernels.*work)(g);
#if defined(__x86_64__)
  floats = std::max(floats, (kAvx2FmaKernels.*work)(g));
#endif
  return floats;
}

// For stride 1 and pad < k, dx is the convolution of dy, padded by k - 1 - pad, with the
// weights flipped in both spatial directions and the channel axes swapped.
bool backward_data_by_convolution(const Conv2dGeometry& g) {
  return g.stride == 1 && g.pad <= g.k - 1;
}

Conv2dGeometry transposed(const Conv2dGeometry& g) {
  return Conv2dGeometry::make(g.out_c, g.out_h, g.out_w, g.in_c, g.k, 1, g.k - 1 - g.pad);
}

int64_t weight_numel(const Conv2dGeometry& g) {
  return g.out_c * g.patch_size();
}

bool single_channel(const Conv2dGeometry& g) {
  return g.in_c == 1 && g.out_c == 1;
}

// The single-channel kernels, one image at a time, walk the k * k taps (walk_runs, with the
// patch-matrix row co / plane as the tap) and, per tap and output row, the outputs whose input
// lies inside the image: every output sums its bias and then its taps in order. Stride 1 has
// loops of its own so that the compiler sees contiguous rows and vectorizes them.
void single_channel_forward(const Conv2dGeometry& g, const float* x, const float* w, float b,
                            float* y) {
  const int64_t plane = g.out_plane();
  std::fill(y, y + plane, b);
  walk_runs(g, [&](int64_t co, int64_t xo, int64_t lo, int64_t hi) {
    const float wt = w[co / plane];
    float* __restrict yr = y + co % plane;
    const float* __restrict xr = x + xo;
    if (g.stride == 1)
      for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wt * xr[ow];
    else
      for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wt * xr[ow * g.stride];
  });
}

void single_channel_backward_data(const Conv2dGeometry& g, const float* dy, const float* w,
                                  float* dx) {
  const int64_t plane = g.out_plane();
  std::fill(dx, dx + g.in_numel(), 0.0f);
  walk_runs(g, [&](int64_t co, int64_t xo, int64_t lo, int64_t hi) {
    const float wt = w[co / plane];
    const float* __restrict d = dy + co % plane;
    float* __restrict xr = dx + xo;
    if (g.stride == 1)
      for (int64_t ow = lo; ow < hi; ++ow) xr[ow] += wt * d[ow];
    else
      for (int64_t ow = lo; ow < hi; ++ow) xr[ow * g.stride] += wt * d[ow];
  });
}

// Each run's products are summed in eight interleaved parts (vectorizable, as add_plane_sums)
// and added to its tap.
void single_channel_backward_weight(const Conv2dGeometry& g, const float* x, const float* dy,
                                    float* dw) {
  constexpr int kParts = 8;
  const int64_t plane = g.out_plane();
  walk_runs(g, [&](int64_t co, int64_t xo, int64_t lo, int64_t hi) {
    const float* d = dy + co % plane;
    const float* xr = x + xo;
    float part[kParts] = {};
    const int64_t whole = lo + (hi - lo) / kParts * kParts;
    if (g.stride == 1)
      for (int64_t ow = lo; ow < whole; ow += kParts)
        for (int j = 0; j < kParts; ++j) part[j] += d[ow + j] * xr[ow + j];
    else
      for (int64_t ow = lo; ow < whole; ow += kParts)
        for (int j = 0; j < kParts; ++j) part[j] += d[ow + j] * xr[(ow + j) * g.stride];
    for (int64_t ow = whole; ow < hi; ++ow) part[ow - whole] += d[ow] * xr[ow * g.stride];
    float sum = part[0];
    for (int j = 1; j < kParts; ++j) sum += part[j];
    dw[co / plane] += sum;
  });
}

// db[o] += the sum of channel o's planes over the images. Eight interleaved partial sums, added
// in order at the end, let the compiler vectorize the loop (a single running sum would be a
// chain of dependent additions) and depend on nothing but the plane size and image count.
void add_plane_sums(const Conv2dGeometry& g, int64_t o0, int64_t o1, int64_t images,
                    const float* dy, float* db) {
  constexpr int kParts = 8;
  const int64_t plane = g.out_plane(), whole = plane / kParts * kParts;
  for (int64_t o = o0; o < o1; ++o) {
    float part[kParts] = {};
    for (int64_t n = 0; n < images; ++n) {
      const float* d = dy + n * g.out_numel() + o * plane;
      for (int64_t p = 0; p < whole; p += kParts)
        for (int j = 0; j < kParts; ++j) part[j] += d[p + j];
      for (int64_t p = whole; p < plane; ++p) part[p - whole] += d[p];
    }
    float sum = part[0];
    for (int j = 1; j < kParts; ++j) sum += part[j];
    db[o] += sum;
  }
}

}  // namespace

Conv2dGeometry Conv2dGeometry::make(int64_t in_c, int64_t in_h, int64_t in_w, int64_t out_c,
                                    int64_t k, int64_t stride, int64_t pad) {
  Conv2dGeometry g{in_c, in_h, in_w, out_c, k, stride, pad};
  g.out_h = (in_h + 2 * pad - k) / stride + 1;
  g.out_w = (in_w + 2 * pad - k) / stride + 1;
  return g;
}

void im2col(const Conv2dGeometry& g, const float* x, float* col) {
  im2col_any(g, x, col);
}

void col2im_add(const Conv2dGeometry& g, const float* col, float* x) {
  col2im_add_any(g, col, x);
}

int64_t conv2d_forward_work(const Conv2dGeometry& g) {
  if (single_channel(g)) return 0;
  return work_any_isa(&KernelSet::conv2d_forward_work, g);
}

int64_t conv2d_backward_data_work(const Conv2dGeometry& g) {
  if (single_channel(g)) return 0;
  if (backward_data_by_convolution(g))
    return weight_numel(g) + work_any_isa(&KernelSet::conv2d_forward_work, transposed(g));
  return g.col_floats();
}

int64_t conv2d_backward_weight_work(const Conv2dGeometry& g) {
  if (single_channel(g)) return 0;
  if (g.stride == 1) return work_any_isa(&KernelSet::conv2d_weight_grad_work, g);
  return g.col_floats() + weight_numel(g);
}

void conv2d_forward(const Conv2dGeometry& g, int64_t images, const float* x, const float* w,
                    const float* b, float* y, float* work) {
  if (!single_channel(g)) return active_kernels().conv2d_forward(g, images, x, w, b, y, work);
  for (int64_t n = 0; n < images; ++n)
    single_channel_forward(g, x + n * g.in_numel(), w, b ? *b : 0.0f, y + n * g.out_numel());
}

void conv2d_backward_data(const Conv2dGeometry& g, int64_t images, const float* dy, const float* w,
                          float* dx, float* work) {
  if (single_channel(g)) {
    for (int64_t n = 0; n < images; ++n)
      single_channel_backward_data(g, dy + n * g.out_numel(), w, dx + n * g.in_numel());
    return;
  }
  const int64_t kk = g.k * g.k;
  if (backward_data_by_convolution(g)) {
    float* flipped = work;  // [in_c, out_c, k, k]
    for (int64_t o = 0; o < g.out_c; ++o)
      for (int64_t c = 0; c < g.in_c; ++c)
        for (int64_t t = 0; t < kk; ++t)
          flipped[(c * g.out_c + o) * kk + kk - 1 - t] = w[(o * g.in_c + c) * kk + t];
    conv2d_forward(transposed(g), images, dy, flipped, nullptr, dx, work + weight_numel(g));
    return;
  }
  // Other strides: the patch matrix of dx is w^T dy, added back to the pixels it came from.
  const int64_t plane = g.out_plane();
  for (int64_t n = 0; n < images; ++n) {
    const float* dyn = dy + n * g.out_numel();
    float* dxn = dx + n * g.in_numel();
    gemm_f32(true, false, g.patch_size(), plane, g.out_c, 1.0f, w, g.patch_size(), dyn, plane, 0.0f,
             work, plane);
    std::fill(dxn, dxn + g.in_numel(), 0.0f);
    col2im_add(g, work, dxn);
  }
}

// Stride 1 runs the kernel set's correlation of dy with x. Other strides accumulate dw^T +=
// im2col(x) dy^T in a transposed copy, so that each product is a GEMM whose many rows are the
// patch matrix, read in place, and whose few columns are the channels.
void conv2d_backward_weight(const Conv2dGeometry& g, int64_t o0, int64_t o1, int64_t images,
                            const float* x, const float* dy, float* dw, float* db, float* work) {
  const int64_t taps = g.patch_size(), plane = g.out_plane(), channels = o1 - o0;
  if (single_channel(g)) {
    for (int64_t n = 0; o0 < o1 && n < images; ++n)
      single_channel_backward_weight(g, x + n * g.in_numel(), dy + n * g.out_numel(), dw);
  } else if (g.stride == 1) {
    active_kernels().conv2d_weight_grad(g, o0, o1, images, x, dy, dw, work);
  } else {
    float* col = work;
    float* dwt = work + g.col_floats();  // [taps, channels]
    for (int64_t o = 0; o < channels; ++o)
      for (int64_t t = 0; t < taps; ++t) dwt[t * channels + o] = dw[(o0 + o) * taps + t];
    for (int64_t n = 0; n < images; ++n) {
      im2col(g, x + n * g.in_numel(), col);
      gemm_f32(false, true, taps, channels, plane, 1.0f, col, plane,
               dy + n * g.out_numel() + o0 * plane, plane, 1.0f, dwt, channels);
    }
    for (int64_t o = 0; o < channels; ++o)
      for (int64_t t = 0; t < taps; ++t) dw[(o0 + o) * taps + t] = dwt[t * channels + o];
  }
  if (db) add_plane_sums(g, o0, o1, images, dy, db);
}

}  // namespace zotrain::kernels
