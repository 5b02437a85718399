// Portable reference pooling.
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

}  // namespace

Pool2dGeometry Pool2dGeometry::make(int64_t in_h, int64_t in_w, int64_t k, int64_t stride) {
  return {in_h, in_w, k, stride, (in_h - k) / stride + 1, (in_w - k) / stride + 1};
}

void max_pool2d_forward(const Pool2dGeometry& g, int64_t planes, const float* x, float* y) {
  for_each_window(g, planes, [&](int64_t base, int64_t out, int64_t origin) {
    y[out] = x[base + window_argmax(g, x + base, origin)];
  });
}

void max_pool2d_backward(const Pool2dGeometry& g, int64_t planes, const float* x, const float* dy,
                         float* dx) {
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
