// 2-D convolution of ONE image [in_c, in_h, in_w] by weights [out_c, in_c, k, k], square kernel,
// zero padding. Callers loop over images (and threads); every function has a fixed summation
// order for each output element, so splitting a batch or the output channels over threads
// never changes a result.
#pragma once

#include <cstdint>

namespace zotrain::kernels {

struct Conv2dGeometry {
  int64_t in_c = 0, in_h = 0, in_w = 0;
  int64_t out_c = 0, k = 0, stride = 1, pad = 0;
  int64_t out_h = 0, out_w = 0;

  // Fills out_h and out_w: floor((in + 2 pad - k) / stride) + 1, as PyTorch. The caller
  // guarantees k <= in + 2 pad and stride >= 1.
  static Conv2dGeometry make(int64_t in_c, int64_t in_h, int64_t in_w, int64_t out_c, int64_t k,
                             int64_t stride, int64_t pad);

  // The patch matrix ("col") has patch_size() rows, one per (channel, kernel row, kernel
  // column), and out_plane() columns, one per output pixel.
  int64_t patch_size() const { return in_c * k * k; }
  int64_t out_plane() const { return out_h * out_w; }
  int64_t col_floats() const { return patch_size() * out_plane(); }
  int64_t in_numel() const { return in_c * in_h * in_w; }
  int64_t out_numel() const { return out_c * out_plane(); }
};

// col = the patch matrix of x, zeros where a patch overlaps the padding.
void im2col(const Conv2dGeometry& g, const float* x, float* col);
// x += the adjoint of im2col applied to col (each entry added to the pixel it was read from).
void col2im_add(const Conv2dGeometry& g, const float* col, float* x);

// y = w * im2col(x) + b. `col` is scratch of col_floats(); b may be null (no bias).
void conv2d_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* b,
                    float* y, float* col);
// dx = dL/dx for dy = dL/dy (dx is overwritten). `col` is scratch of col_floats().
void conv2d_backward_data(const Conv2dGeometry& g, const float* dy, const float* w, float* dx,
                          float* col);
// dw += dy * im2col(x)^T and db += the sum of each dy plane (db may be null). `col` is scratch of
// col_floats(). To split the output channels [o0, o1) over threads, pass a geometry with
// out_c = o1 - o0 and dy, dw, db advanced to channel o0: the sums stay the same.
void conv2d_backward_weight(const Conv2dGeometry& g, const float* x, const float* dy, float* dw,
                            float* db, float* col);

}  // namespace zotrain::kernels
