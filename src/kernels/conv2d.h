// 2-D convolution of NCHW images [in_c, in_h, in_w] by weights [out_c, in_c, k, k], square
// kernel, zero padding. Every function computes each output element by the same operations
// whatever the number of images or the range of output channels it is given, so splitting a
// batch or the output channels over threads never changes a result.
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

// col = the patch matrix of one image x, zeros where a patch overlaps the padding.
void im2col(const Conv2dGeometry& g, const float* x, float* col);
// x += the adjoint of im2col applied to col (each entry added to the pixel it was read from).
void col2im_add(const Conv2dGeometry& g, const float* col, float* x);

// What conv2d_forward runs with the active instruction set, for `zotrain info`.
const char* conv2d_f32_kernel_name();

// Scratch floats one call of each function below needs (one per thread), whatever the active
// instruction set.
int64_t conv2d_forward_work(const Conv2dGeometry& g);
int64_t conv2d_backward_data_work(const Conv2dGeometry& g);
int64_t conv2d_backward_weight_work(const Conv2dGeometry& g);

// Images that conv2d_forward (conv2d_backward_data) of the active instruction set computes as one
// product, counted from the first image of its call; 0 where every image is its own. A caller
// splitting a batch over threads gives each call a whole number of them from an image index that
// is a multiple of it (the last call the rest), so that the results do not depend on the split.
int64_t conv2d_forward_batch(const Conv2dGeometry& g);
int64_t conv2d_backward_data_batch(const Conv2dGeometry& g);

// y = w * im2col(x) + b for `images` consecutive images; b may be null (no bias).
void conv2d_forward(const Conv2dGeometry& g, int64_t images, const float* x, const float* w,
                    const float* b, float* y, float* work);
// Groups of a grouped convolution (as consecutive geometries g of one image: x, dx and y, dy
// advance by in_numel() and out_numel() a group, w and dw by out_c * patch_size(), b and db by
// out_c) that one call of the _grouped functions below computes together; 1 where each group is
// its own. They do so for depthwise 3x3 convolutions on small planes, with the same bits as a
// call per group.
int64_t conv2d_groups_per_call(const Conv2dGeometry& g);
void conv2d_forward_grouped(const Conv2dGeometry& g, int64_t groups, const float* x, const float* w,
                            const float* b, float* y, float* work);
void conv2d_backward_data_grouped(const Conv2dGeometry& g, int64_t groups, const float* dy,
                                  const float* w, float* dx, float* work);
// conv2d_backward_weight of each group (all its output channels, one image).
void conv2d_backward_weight_grouped(const Conv2dGeometry& g, int64_t groups, const float* x,
                                    const float* dy, float* dw, float* db, float* work);
// dx = dL/dx for dy = dL/dy, for `images` consecutive images (dx is overwritten).
void conv2d_backward_data(const Conv2dGeometry& g, int64_t images, const float* dy, const float* w,
                          float* dx, float* work);
// For the output channels [o0, o1): dw += dy * im2col(x)^T and db += the sum of each dy plane
// (db may be null), adding the images in order. x, dy, dw and db are the whole arrays of the
// `images` images and out_c channels; only channels [o0, o1) are read from dy and written.
void conv2d_backward_weight(const Conv2dGeometry& g, int64_t o0, int64_t o1, int64_t images,
                            const float* x, const float* dy, float* dw, float* db, float* work);

}  // namespace zotrain::kernels
