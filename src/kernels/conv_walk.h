// Internal to src/kernels: the walk over a patch matrix that im2col and col2im share, for every
// element type (the f32 and the int8 convolutions).
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/conv2d.h"

namespace zotrain::kernels {

// For stride 1 and pad < k, dx is the convolution of dy, padded by k - 1 - pad, with the
// weights flipped in both spatial directions and the channel axes swapped (flip_weights): the
// forward kernels compute the input gradient too.
inline bool backward_data_by_convolution(const Conv2dGeometry& g) {
  return g.stride == 1 && g.pad <= g.k - 1;
}

inline Conv2dGeometry transposed(const Conv2dGeometry& g) {
  return Conv2dGeometry::make(g.out_c, g.out_h, g.out_w, g.in_c, g.k, 1, g.k - 1 - g.pad);
}

inline int64_t weight_numel(const Conv2dGeometry& g) {
  return g.out_c * g.patch_size();
}

// flipped [in_c, out_c, k, k] = w [out_c, in_c, k, k] with the taps in reverse order.
template <typename T>
void flip_weights(const Conv2dGeometry& g, const T* w, T* flipped) {
  const int64_t kk = g.k * g.k;
  for (int64_t o = 0; o < g.out_c; ++o)
    for (int64_t c = 0; c < g.in_c; ++c)
      for (int64_t t = 0; t < kk; ++t)
        flipped[(c * g.out_c + o) * kk + kk - 1 - t] = w[(o * g.in_c + c) * kk + t];
}

// Walks the patch matrix one run of out_w entries (c, ki, kj, oh) at a time: calls
// run(col_offset, x_offset, lo, hi), where the entries ow in [lo, hi) read x[x_offset + ow *
// stride] and the others lie in the zero padding (x_offset is meaningless when lo == hi).
// im2col and col2im are this one walk with opposite data movement.
template <typename Run>
void walk_runs(const Conv2dGeometry& g, Run run) {
  int64_t co = 0;
  for (int64_t c = 0; c < g.in_c; ++c)
    for (int64_t ki = 0; ki < g.k; ++ki)
      for (int64_t kj = 0; kj < g.k; ++kj) {
        // iw = ow * stride - pad + kj lies in [0, in_w) for ow in [lo, hi).
        const int64_t before = g.pad - kj, last = g.in_w - 1 + g.pad - kj;
        const int64_t lo = before <= 0 ? 0 : std::min(g.out_w, (before + g.stride - 1) / g.stride);
        const int64_t hi = last < 0 ? 0 : std::min(g.out_w, last / g.stride + 1);
        for (int64_t oh = 0; oh < g.out_h; ++oh, co += g.out_w) {
          const int64_t ih = oh * g.stride - g.pad + ki;
          if (ih < 0 || ih >= g.in_h || lo >= hi)
            run(co, int64_t{0}, int64_t{0}, int64_t{0});
          else
            run(co, (c * g.in_h + ih) * g.in_w - g.pad + kj, lo, hi);
        }
      }
}

// im2col and col2im_add (conv2d.h) for any element types.
template <typename T>
void im2col_any(const Conv2dGeometry& g, const T* x, T* col) {
  walk_runs(g, [&](int64_t co, int64_t xo, int64_t lo, int64_t hi) {
    T* dst = col + co;
    std::fill(dst, dst + lo, T{0});
    if (g.stride == 1)
      std::copy(x + xo + lo, x + xo + hi, dst + lo);
    else
      for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = x[xo + ow * g.stride];
    std::fill(dst + hi, dst + g.out_w, T{0});
  });
}

template <typename T, typename Acc>
void col2im_add_any(const Conv2dGeometry& g, const T* col, Acc* x) {
  walk_runs(g, [&](int64_t co, int64_t xo, int64_t lo, int64_t hi) {
    for (int64_t ow = lo; ow < hi; ++ow) x[xo + ow * g.stride] += col[co + ow];
  });
}

}  // namespace zotrain::kernels
