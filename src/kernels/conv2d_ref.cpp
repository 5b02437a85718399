// Portable reference convolution: im2col + gemm_f32. A faster version (direct, SIMD, oneDNN)
// can replace this file behind the same functions.
#include "zotrain/kernels/conv2d.h"
#include "zotrain/kernels/gemm.h"

namespace zotrain::kernels {

namespace {

// Walks the patch matrix in storage order: calls inside(col_index, x_index) for entries read
// from the input and padding(col_index) for entries in the zero padding. im2col and col2im are
// this one walk with opposite data movement.
template <typename Inside, typename Padding>
void walk_patches(const Conv2dGeometry& g, Inside inside, Padding padding) {
  int64_t ci = 0;
  for (int64_t c = 0; c < g.in_c; ++c)
    for (int64_t ki = 0; ki < g.k; ++ki)
      for (int64_t kj = 0; kj < g.k; ++kj)
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          int64_t ih = oh * g.stride - g.pad + ki;
          bool row_inside = ih >= 0 && ih < g.in_h;
          for (int64_t ow = 0; ow < g.out_w; ++ow, ++ci) {
            int64_t iw = ow * g.stride - g.pad + kj;
            if (row_inside && iw >= 0 && iw < g.in_w)
              inside(ci, (c * g.in_h + ih) * g.in_w + iw);
            else
              padding(ci);
          }
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
  walk_patches(
      g, [&](int64_t ci, int64_t xi) { col[ci] = x[xi]; }, [&](int64_t ci) { col[ci] = 0.0f; });
}

void col2im_add(const Conv2dGeometry& g, const float* col, float* x) {
  walk_patches(
      g, [&](int64_t ci, int64_t xi) { x[xi] += col[ci]; }, [](int64_t) {});
}

void conv2d_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* b,
                    float* y, float* col) {
  const int64_t plane = g.out_plane();
  for (int64_t o = 0; o < g.out_c; ++o)
    for (int64_t p = 0; p < plane; ++p) y[o * plane + p] = b ? b[o] : 0.0f;
  im2col(g, x, col);
  gemm_f32(false, false, g.out_c, plane, g.patch_size(), 1.0f, w, g.patch_size(), col, plane, 1.0f,
           y, plane);
}

void conv2d_backward_data(const Conv2dGeometry& g, const float* dy, const float* w, float* dx,
                          float* col) {
  const int64_t plane = g.out_plane();
  gemm_f32(true, false, g.patch_size(), plane, g.out_c, 1.0f, w, g.patch_size(), dy, plane, 0.0f,
           col, plane);
  for (int64_t i = 0, n = g.in_numel(); i < n; ++i) dx[i] = 0.0f;
  col2im_add(g, col, dx);
}

void conv2d_backward_weight(const Conv2dGeometry& g, const float* x, const float* dy, float* dw,
                            float* db, float* col) {
  const int64_t plane = g.out_plane();
  im2col(g, x, col);
  gemm_f32(false, true, g.out_c, g.patch_size(), plane, 1.0f, dy, plane, col, plane, 1.0f, dw,
           g.patch_size());
  if (db)
    for (int64_t o = 0; o < g.out_c; ++o)
      for (int64_t p = 0; p < plane; ++p) db[o] += dy[o * plane + p];
}

}  // namespace zotrain::kernels
