// Pooling: direct loops over the windows, and for max pooling with 2x2 windows at stride 2
// (LeNet's, the common case) loops over output rows that the compiler vectorizes.
#include "zotrain/kernels/pool.h"

namespace zotrain::kernels {

namespace {

// Calls fn(x_plane, out_index, window_origin) for every output pixel of every plane, where
// window_origin indexes the window's top-left pixel in the plane. Scan order is row-major.
template <typename Fn>
void for_each_window(const Pool2dGeometry& g, int64_t planes, Fn fn) {
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow)
        fn(p * g.in_plane(), p * g.out_plane() + oh * g.out_w + ow,
           oh * g.stride * g.in_w + ow * g.stride);
}

// Offset, within the plane, of the window's first maximum in row-major scan order.
int64_t window_argmax(const Pool2dGeometry& g, const float* plane, int64_t origin) {
  int64_t best = origin;
  for (int64_t i = 0; i < g.k; ++i)
    for (int64_t j = 0; j < g.k; ++j) {
      int64_t at = origin + i * g.in_w + j;
      if (plane[at] > plane[best]) best = at;
    }
  return best;
}

void zero(float* a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = 0.0f;
}

bool is_2x2_stride_2(const Pool2dGeometry& g) {
  return g.k == 2 && g.stride == 2;
}

// The window (a, b over c, d) scanned as window_argmax does: a later element takes over only
// when strictly greater than the maximum so far. Written as selects, without branches, so that
// the loops over a row vectorize.
struct Max4 {
  float ab, abc, value;  // the maximum after b, after c, after d
};
inline Max4 max4(float a, float b, float c, float d) {
  Max4 m;
  m.ab = b > a ? b : a;
  m.abc = c > m.ab ? c : m.ab;
  m.value = d > m.abc ? d : m.abc;
  return m;
}

void max_pool_2x2_forward(const Pool2dGeometry& g, int64_t planes, const float* x, float* y) {
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const float* r0 = x + p * g.in_plane() + 2 * oh * g.in_w;
      const float* r1 = r0 + g.in_w;
      float* yr = y + p * g.out_plane() + oh * g.out_w;
      for (int64_t ow = 0; ow < g.out_w; ++ow)
        yr[ow] = max4(r0[2 * ow], r0[2 * ow + 1], r1[2 * ow], r1[2 * ow + 1]).value;
    }
}

// Windows do not overlap: every input pixel gets dy where it is its window's first maximum and
// 0 elsewhere, including the odd last row or column that no window covers.
void max_pool_2x2_backward(const Pool2dGeometry& g, int64_t planes, const float* x, const float* dy,
                           float* dx) {
  for (int64_t p = 0; p < planes; ++p) {
    float* dxp = dx + p * g.in_plane();
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const float* r0 = x + p * g.in_plane() + 2 * oh * g.in_w;
      const float* r1 = r0 + g.in_w;
      const float* dyr = dy + p * g.out_plane() + oh * g.out_w;
      float* d0 = dxp + 2 * oh * g.in_w;
      float* d1 = d0 + g.in_w;
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const float a = r0[2 * ow], b = r0[2 * ow + 1], c = r1[2 * ow], d = r1[2 * ow + 1];
        const Max4 m = max4(a, b, c, d);
        // The gradient goes to the last element that took over, else on to the earlier ones.
        const float grad = dyr[ow];
        const bool to_d = d > m.abc, to_c = c > m.ab, to_b = b > a;
        const float before_d = to_d ? 0.0f : grad, before_c = to_c ? 0.0f : before_d;
        d1[2 * ow + 1] = to_d ? grad : 0.0f;
        d1[2 * ow] = to_c ? before_d : 0.0f;
        d0[2 * ow + 1] = to_b ? before_c : 0.0f;
        d0[2 * ow] = to_b ? 0.0f : before_c;
      }
      if (g.in_w > 2 * g.out_w) d0[g.in_w - 1] = d1[g.in_w - 1] = 0.0f;
    }
    if (g.in_h > 2 * g.out_h) zero(dxp + (g.in_h - 1) * g.in_w, g.in_w);
  }
}

}  // namespace

Pool2dGeometry Pool2dGeometry::make(int64_t in_h, int64_t in_w, int64_t k, int64_t stride) {
  return {in_h, in_w, k, stride, (in_h - k) / stride + 1, (in_w - k) / stride + 1};
}

void max_pool2d_forward(const Pool2dGeometry& g, int64_t planes, const float* x, float* y) {
  if (is_2x2_stride_2(g)) return max_pool_2x2_forward(g, planes, x, y);
  for_each_window(g, planes, [&](int64_t base, int64_t out, int64_t origin) {
    y[out] = x[base + window_argmax(g, x + base, origin)];
  });
}

void max_pool2d_backward(const Pool2dGeometry& g, int64_t planes, const float* x, const float* dy,
                         float* dx) {
  if (is_2x2_stride_2(g)) return max_pool_2x2_backward(g, planes, x, dy, dx);
  zero(dx, planes * g.in_plane());
  for_each_window(g, planes, [&](int64_t base, int64_t out, int64_t origin) {
    dx[base + window_argmax(g, x + base, origin)] += dy[out];
  });
}

void avg_pool2d_forward(const Pool2dGeometry& g, int64_t planes, const float* x, float* y) {
  const float area = static_cast<float>(g.k * g.k);
  for_each_window(g, planes, [&](int64_t base, int64_t out, int64_t origin) {
    float sum = 0.0f;
    for (int64_t i = 0; i < g.k; ++i)
      for (int64_t j = 0; j < g.k; ++j) sum += x[base + origin + i * g.in_w + j];
    y[out] = sum / area;
  });
}

void avg_pool2d_backward(const Pool2dGeometry& g, int64_t planes, const float* dy, float* dx) {
  const float area = static_cast<float>(g.k * g.k);
  zero(dx, planes * g.in_plane());
  for_each_window(g, planes, [&](int64_t base, int64_t out, int64_t origin) {
    const float share = dy[out] / area;
    for (int64_t i = 0; i < g.k; ++i)
      for (int64_t j = 0; j < g.k; ++j) dx[base + origin + i * g.in_w + j] += share;
  });
}

}  // namespace zotrain::kernels
