// Internal to src/kernels: the window walks of pooling and max pooling for any element type (the
// f32 and the int8 kernels).
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "zotrain/kernels/pool.h"

namespace zotrain::kernels {

// A window's pixels in the plane: rows x cols from the top-left one at `origin` (k x k, or
// fewer where padding clips it).
struct PoolWindow {
  int64_t origin, rows, cols;
};

// Calls fn(x_plane, out_index, window) for every output pixel of every plane. Scan order is
// row-major.
template <typename Fn>
void for_each_window(const Pool2dGeometry& g, int64_t planes, Fn fn) {
  const auto clip = [&](int64_t o, int64_t size) {
    const int64_t first = o * g.stride - g.pad, last = first + g.k;
    return std::pair{first < 0 ? 0 : first, (last > size ? size : last) - (first < 0 ? 0 : first)};
  };
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const auto [top, rows] = clip(oh, g.in_h);
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const auto [left, cols] = clip(ow, g.in_w);
        fn(p * g.in_plane(), p * g.out_plane() + oh * g.out_w + ow,
           PoolWindow{top * g.in_w + left, rows, cols});
      }
    }
}

// Offset, within the plane, of the window's first maximum in row-major scan order.
template <typename T>
int64_t window_argmax(const Pool2dGeometry& g, const T* plane, PoolWindow w) {
  int64_t best = w.origin;
  for (int64_t i = 0; i < w.rows; ++i)
    for (int64_t j = 0; j < w.cols; ++j) {
      int64_t at = w.origin + i * g.in_w + j;
      if (plane[at] > plane[best]) best = at;
    }
  return best;
}

template <typename T>
void zero(T* a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = T{0};
}

inline bool is_2x2_stride_2(const Pool2dGeometry& g) {
  return g.k == 2 && g.stride == 2 && g.pad == 0;
}

// The window (a, b over c, d) scanned as window_argmax does: a later element takes over only
// when strictly greater than the maximum so far. Written as selects, without branches, so that
// the loops over a row vectorize (the forward kernel's vectors do the same: simd_kernels.h).
template <typename T>
struct Max4 {
  T ab, abc, value;  // the maximum after b, after c, after d
};
template <typename T>
inline Max4<T> max4(T a, T b, T c, T d) {
  Max4<T> m;
  m.ab = b > a ? b : a;
  m.abc = c > m.ab ? c : m.ab;
  m.value = d > m.abc ? d : m.abc;
  return m;
}

// Windows do not overlap: every input pixel gets dy where it is its window's first maximum and
// 0 elsewhere, including the odd last row or column that no window covers.
// Always inlined, so that a caller compiled for a vector instruction set vectorizes it.
template <typename T>
[[gnu::always_inline]] inline void max_pool_2x2_backward(const Pool2dGeometry& g, int64_t planes,
                                                         const T* x, const T* dy, T* dx) {
  // The sizes in locals: int8 stores may alias g, whose fields would be reloaded every element
  // and keep the loop from vectorizing.
  const int64_t in_h = g.in_h, in_w = g.in_w, out_h = g.out_h, out_w = g.out_w;
  const int64_t in_plane = g.in_plane(), out_plane = g.out_plane();
  for (int64_t p = 0; p < planes; ++p) {
    T* dxp = dx + p * in_plane;
    for (int64_t oh = 0; oh < out_h; ++oh) {
      const T* r0 = x + p * in_plane + 2 * oh * in_w;
      const T* r1 = r0 + in_w;
      const T* dyr = dy + p * out_plane + oh * out_w;
      T* d0 = dxp + 2 * oh * in_w;
      T* d1 = d0 + in_w;
      for (int64_t ow = 0; ow < out_w; ++ow) {
        const T a = r0[2 * ow], b = r0[2 * ow + 1], c = r1[2 * ow], d = r1[2 * ow + 1];
        const Max4<T> m = max4(a, b, c, d);
        // The gradient goes to the last element that took over, else on to the earlier ones.
        const T grad = dyr[ow];
        const bool to_d = d > m.abc, to_c = c > m.ab, to_b = b > a;
        if constexpr (std::is_integral_v<T>) {
          // Masks, not selects: GCC made the selects branches, mispredicted on random data.
          const int md = -int{to_d}, mc = -int{to_c}, mb = -int{to_b};
          const int before_d = grad & ~md, before_c = before_d & ~mc;
          d1[2 * ow + 1] = static_cast<T>(grad & md);
          d1[2 * ow] = static_cast<T>(before_d & mc);
          d0[2 * ow + 1] = static_cast<T>(before_c & mb);
          d0[2 * ow] = static_cast<T>(before_c & ~mb);
          continue;
        }
        const T before_d = to_d ? T{0} : grad, before_c = to_c ? T{0} : before_d;
        d1[2 * ow + 1] = to_d ? grad : T{0};
        d1[2 * ow] = to_c ? before_d : T{0};
        d0[2 * ow + 1] = to_b ? before_c : T{0};
        d0[2 * ow] = to_b ? T{0} : before_c;
      }
      if (in_w > 2 * out_w) d0[in_w - 1] = d1[in_w - 1] = T{0};
    }
    if (in_h > 2 * out_h) zero(dxp + (in_h - 1) * in_w, in_w);
  }
}

// a += b; int8 errors saturate at ±127 where overlapping windows route several to one pixel.
inline void add_to(float& a, float b) {
  a += b;
}
inline void add_to(int8_t& a, int8_t b) {
  const int sum = a + b;
  a = static_cast<int8_t>(sum > 127 ? 127 : (sum < -127 ? -127 : sum));
}

// Max pooling for any element type (2x2 windows of stride 2 have kernels of their own, which
// pick the same element).
template <typename T>
void max_pool_forward_any(const Pool2dGeometry& g, int64_t planes, const T* x, T* y) {
  for_each_window(g, planes, [&](int64_t base, int64_t out, PoolWindow w) {
    y[out] = x[base + window_argmax(g, x + base, w)];
  });
}

template <typename T>
void max_pool_backward_any(const Pool2dGeometry& g, int64_t planes, const T* x, const T* dy,
                           T* dx) {
  if (is_2x2_stride_2(g)) return max_pool_2x2_backward(g, planes, x, dy, dx);
  zero(dx, planes * g.in_plane());
  for_each_window(g, planes, [&](int64_t base, int64_t out, PoolWindow w) {
    add_to(dx[base + window_argmax(g, x + base, w)], dy[out]);
  });
}

}  // namespace zotrain::kernels
