// Naive double-precision references for the kernels and layers, written as directly from the
// definitions as possible: the tests compare the f32 code against them, and the gradient
// checks differentiate them numerically.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/conv2d.h"
#include "zotrain/core/tensor.h"

namespace zotrain::ref {

using Vec = std::vector<double>;

inline Vec to_vec(const Tensor& t) {
  return Vec(t.data(), t.data() + t.numel());
}

// C = alpha op(A) op(B) + beta C, row-major; C is not read when beta == 0.
inline Vec gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const Vec& a,
                int64_t lda, const Vec& b, int64_t ldb, double beta, Vec c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (int64_t p = 0; p < k; ++p)
        s += (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
      double& cij = c[i * ldc + j];
      cij = alpha * s + (beta == 0.0 ? 0.0 : beta * cij);
    }
  return c;
}

// y = x W^T + b, x [n, in], W [out, in].
inline Vec linear(int64_t n, int64_t in, int64_t out, const Vec& x, const Vec& w, const Vec& b) {
  Vec y(n * out);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = b[o];
      for (int64_t i = 0; i < in; ++i) s += x[r * in + i] * w[o * in + i];
      y[r * out + o] = s;
    }
  return y;
}

// Batch norm with the batch's statistics: y = gamma (x - mean) / sqrt(var + eps) + beta per
// channel of an [N, C] or [N, C, ...] input, over the batch and the positions.
inline Vec batch_norm(const Shape& s, const Vec& x, const Vec& gamma, const Vec& beta, double eps) {
  const int64_t n = s[0], c = s[1], inner = s.row_numel() / c;
  Vec y(x.size());
  for (int64_t ch = 0; ch < c; ++ch) {
    auto at = [&](int64_t b, int64_t i) { return (b * c + ch) * inner + i; };
    double mean = 0, var = 0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i) mean += x[at(b, i)] / double(n * inner);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i)
        var += (x[at(b, i)] - mean) * (x[at(b, i)] - mean) / double(n * inner);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i)
        y[at(b, i)] = gamma[ch] * (x[at(b, i)] - mean) / std::sqrt(var + eps) + beta[ch];
  }
  return y;
}

struct ConvShape {
  int64_t n, c, h, w, out_c, k, stride, pad;
  int64_t groups = 1;  // output channel o sees input channels of group o / (out_c / groups)
  int64_t out_h() const { return (h + 2 * pad - k) / stride + 1; }
  int64_t out_w() const { return (w + 2 * pad - k) / stride + 1; }
  int64_t group_c() const { return c / groups; }  // input channels per group
  int64_t x_numel() const { return n * c * h * w; }
  int64_t w_numel() const { return out_c * group_c() * k * k; }
  int64_t y_numel() const { return n * out_c * out_h() * out_w(); }
};

// The kernels' geometry of a shape, and a short description for failure messages.
inline kernels::Conv2dGeometry geometry(const ConvShape& s) {
  return kernels::Conv2dGeometry::make(s.c, s.h, s.w, s.out_c, s.k, s.stride, s.pad);
}
inline std::string describe(const ConvShape& s) {
  return (::testing::Message() << "c" << s.c << " " << s.h << "x" << s.w << " out" << s.out_c
                               << " k" << s.k << " s" << s.stride << " p" << s.pad)
      .GetString();
}

// The direct 7-loop convolution: calls tap(x_index, w_index, y_index) for every product
// x * w that contributes to an output; taps into the padding are skipped.
template <typename Tap>
void for_each_conv_tap(const ConvShape& s, Tap tap) {
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t o = 0; o < s.out_c; ++o)
      for (int64_t oh = 0; oh < s.out_h(); ++oh)
        for (int64_t ow = 0; ow < s.out_w(); ++ow)
          for (int64_t c = 0; c < s.group_c(); ++c)
            for (int64_t i = 0; i < s.k; ++i)
              for (int64_t j = 0; j < s.k; ++j) {
                int64_t ih = oh * s.stride - s.pad + i, iw = ow * s.stride - s.pad + j;
                if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w) continue;
                const int64_t in_c = o / (s.out_c / s.groups) * s.group_c() + c;
                tap(((n * s.c + in_c) * s.h + ih) * s.w + iw,
                    ((o * s.group_c() + c) * s.k + i) * s.k + j,
                    ((n * s.out_c + o) * s.out_h() + oh) * s.out_w() + ow);
              }
}

// y = conv(x, w) + b; b may be empty.
inline Vec conv2d(const ConvShape& s, const Vec& x, const Vec& w, const Vec& b) {
  Vec y(s.y_numel());
  const int64_t plane = s.out_h() * s.out_w();
  if (!b.empty())
    for (int64_t i = 0; i < s.y_numel(); ++i) y[i] = b[(i / plane) % s.out_c];
  for_each_conv_tap(s, [&](int64_t xi, int64_t wi, int64_t yi) { y[yi] += x[xi] * w[wi]; });
  return y;
}

inline Vec conv2d_backward_data(const ConvShape& s, const Vec& dy, const Vec& w) {
  Vec dx(s.x_numel());
  for_each_conv_tap(s, [&](int64_t xi, int64_t wi, int64_t yi) { dx[xi] += dy[yi] * w[wi]; });
  return dx;
}

inline Vec conv2d_backward_weight(const ConvShape& s, const Vec& x, const Vec& dy) {
  Vec dw(s.w_numel());
  for_each_conv_tap(s, [&](int64_t xi, int64_t wi, int64_t yi) { dw[wi] += dy[yi] * x[xi]; });
  return dw;
}

struct PoolShape {
  int64_t planes, h, w, k, stride;
  int64_t pad = 0;  // positions outside the plane are left out of the window
  int64_t out_h() const { return (h + 2 * pad - k) / stride + 1; }
  int64_t out_w() const { return (w + 2 * pad - k) / stride + 1; }
  int64_t x_numel() const { return planes * h * w; }
  int64_t y_numel() const { return planes * out_h() * out_w(); }
};

// Calls window(y_index, x_indices) for every output, x_indices in row-major scan order.
template <typename Window>
void for_each_pool_window(const PoolShape& s, Window window) {
  std::vector<int64_t> xs;
  int64_t yi = 0;
  for (int64_t p = 0; p < s.planes; ++p)
    for (int64_t oh = 0; oh < s.out_h(); ++oh)
      for (int64_t ow = 0; ow < s.out_w(); ++ow, ++yi) {
        xs.clear();
        for (int64_t i = 0; i < s.k; ++i)
          for (int64_t j = 0; j < s.k; ++j) {
            const int64_t r = oh * s.stride - s.pad + i, c = ow * s.stride - s.pad + j;
            if (r >= 0 && r < s.h && c >= 0 && c < s.w) xs.push_back((p * s.h + r) * s.w + c);
          }
        window(yi, xs);
      }
}

// The index of the first maximum of x over xs.
inline int64_t first_max(const Vec& x, const std::vector<int64_t>& xs) {
  return *std::max_element(xs.begin(), xs.end(), [&](int64_t a, int64_t b) { return x[a] < x[b]; });
}

inline Vec max_pool2d(const PoolShape& s, const Vec& x) {
  Vec y(s.y_numel());
  for_each_pool_window(
      s, [&](int64_t yi, const std::vector<int64_t>& xs) { y[yi] = x[first_max(x, xs)]; });
  return y;
}

inline Vec max_pool2d_backward(const PoolShape& s, const Vec& x, const Vec& dy) {
  Vec dx(s.x_numel());
  for_each_pool_window(
      s, [&](int64_t yi, const std::vector<int64_t>& xs) { dx[first_max(x, xs)] += dy[yi]; });
  return dx;
}

inline Vec avg_pool2d(const PoolShape& s, const Vec& x) {
  Vec y(s.y_numel());
  for_each_pool_window(s, [&](int64_t yi, const std::vector<int64_t>& xs) {
    for (int64_t xi : xs) y[yi] += x[xi] / static_cast<double>(xs.size());
  });
  return y;
}

inline Vec avg_pool2d_backward(const PoolShape& s, const Vec& dy) {
  Vec dx(s.x_numel());
  for_each_pool_window(s, [&](int64_t yi, const std::vector<int64_t>& xs) {
    for (int64_t xi : xs) dx[xi] += dy[yi] / static_cast<double>(xs.size());
  });
  return dx;
}

inline Vec relu(Vec x) {
  for (double& v : x) v = std::max(v, 0.0);
  return x;
}

// Mean over rows of -log softmax(z)[label], computed with the row maximum subtracted.
inline double softmax_cross_entropy(int64_t rows, int64_t classes, const Vec& z,
                                    const uint8_t* labels) {
  double total = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const double* zr = z.data() + r * classes;
    double m = *std::max_element(zr, zr + classes), s = 0.0;
    for (int64_t c = 0; c < classes; ++c) s += std::exp(zr[c] - m);
    total += std::log(s) + m - zr[labels[r]];
  }
  return total / static_cast<double>(rows);
}

}  // namespace zotrain::ref
