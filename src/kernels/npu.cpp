#include "zotrain/kernels/npu.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "target_clones.h"
#include "zotrain/core/error.h"

namespace zotrain::kernels {

FixedMultiplier quantize_multiplier(double m) {
  if (!(m > 0) || !std::isfinite(m) || m >= 2147483648.0)
    throw InputError("requantization multiplier " + std::to_string(m) +
                     ": expected a finite value in (0, 2^31)");
  int exp = 0;
  const double q = std::frexp(m, &exp);  // m = q * 2^exp, q in [0.5, 1)
  auto m0 = static_cast<int64_t>(std::llround(q * 2147483648.0));
  if (m0 == (int64_t{1} << 31)) {  // q rounded up to 1
    m0 /= 2;
    ++exp;
  }
  return {static_cast<int32_t>(m0), exp};
}

int64_t NpuConvGeometry::col_bytes() const {
  const bool depthwise = in_c == groups && out_c == groups;
  if (depthwise || (kernel == 1 && stride == 1 && pad == 0)) return 0;
  return in_c / groups * kernel * kernel * out_h() * out_w();
}

namespace {

// Outputs [first, last) of an output row read input columns inside [0, w) for tap kx.
struct Inside {
  int64_t first, last;
};
Inside inside(int64_t out_w, int64_t in_w, int64_t kx, int64_t s, int64_t p) {
  const int64_t first = std::min(out_w, std::max<int64_t>(0, (p - kx + s - 1) / s));
  return {first, std::max(first, std::min(out_w, (in_w - 1 + p - kx) / s + 1))};
}

// col[(c * k + ky) * k + kx, oy * ow + ox] = x[c, oy * s - p + ky, ox * s - p + kx] (0 outside).
void im2col(const NpuConvGeometry& g, int64_t channels, const int8_t* x, int8_t* col) {
  const int64_t oh = g.out_h(), ow = g.out_w(), k = g.kernel, s = g.stride, p = g.pad;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t ky = 0; ky < k; ++ky)
      for (int64_t kx = 0; kx < k; ++kx) {
        int8_t* row = col + ((c * k + ky) * k + kx) * oh * ow;
        for (int64_t oy = 0; oy < oh; ++oy) {
          int8_t* out = row + oy * ow;
          const int64_t iy = oy * s - p + ky;
          if (iy < 0 || iy >= g.in_h) {
            std::memset(out, 0, static_cast<size_t>(ow));
            continue;
          }
          const auto [first, last] = inside(ow, g.in_w, kx, s, p);
          const int8_t* in = x + (c * g.in_h + iy) * g.in_w + first * s - p + kx;
          std::memset(out, 0, static_cast<size_t>(first));
          if (s == 1)
            std::memcpy(out + first, in, static_cast<size_t>(last - first));
          else
            for (int64_t ox = first; ox < last; ++ox) out[ox] = in[(ox - first) * s];
          std::memset(out + last, 0, static_cast<size_t>(ow - last));
        }
      }
}

// y[r][j] = clamp(requantize(bias_r + sum_kk w[r][kk] * col[kk][j])) for R output channels.
// Blocks of 16 positions keep their R * 16 int32 sums in registers over the whole sum, and each
// column value, loaded once, feeds the R channels; int8 * int8 products fit int16. GCC/Clang
// vector types of at most 32 bytes, since the compiler spilled the plain loops' sums.
typedef int8_t S8x8 __attribute__((vector_size(8)));
typedef int16_t S16x8 __attribute__((vector_size(16)));
typedef int32_t S32x8 __attribute__((vector_size(32)));

template <int R>
__attribute__((always_inline)) inline void dot_rows(int64_t kk_count, int64_t positions,
                                                    const int8_t* const* w, const int32_t* bias,
                                                    const int8_t* col, FixedMultiplier mult,
                                                    int32_t lo, int32_t hi, int8_t* y) {
  constexpr int kBlock = 16;
  const int8_t* wr[R];
  for (int r = 0; r < R; ++r) wr[r] = w[r];
  int64_t j0 = 0;
  for (; j0 + kBlock <= positions; j0 += kBlock) {
    S32x8 a0[R], a1[R];  // positions j0..j0+7 and j0+8..j0+15
    for (int r = 0; r < R; ++r) a0[r] = a1[r] = S32x8{} + (bias ? bias[r] : 0);
    const int8_t* c = col + j0;
    for (int64_t kk = 0; kk < kk_count; ++kk, c += positions) {
      S8x8 c0, c1;
      std::memcpy(&c0, c, sizeof c0);
      std::memcpy(&c1, c + 8, sizeof c1);
      const S16x8 d0 = __builtin_convertvector(c0, S16x8), d1 = __builtin_convertvector(c1, S16x8);
      for (int r = 0; r < R; ++r) {
        const auto v = static_cast<int16_t>(wr[r][kk]);
        a0[r] += __builtin_convertvector(d0 * v, S32x8);
        a1[r] += __builtin_convertvector(d1 * v, S32x8);
      }
    }
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < 8; ++t) {
        y[r * positions + j0 + t] = clamp_s8(requantize(a0[r][t], mult), lo, hi);
        y[r * positions + j0 + 8 + t] = clamp_s8(requantize(a1[r][t], mult), lo, hi);
      }
  }
  for (int r = 0; r < R; ++r)
    for (int64_t j = j0; j < positions; ++j) {
      int32_t a = bias ? bias[r] : 0;
      for (int64_t kk = 0; kk < kk_count; ++kk) a += wr[r][kk] * col[kk * positions + j];
      y[r * positions + j] = clamp_s8(requantize(a, mult), lo, hi);
    }
}

ZT_INT8_CLONES void dot_rows4(int64_t kk_count, int64_t positions, const int8_t* const* w,
                              const int32_t* bias, const int8_t* col, FixedMultiplier mult,
                              int32_t lo, int32_t hi, int8_t* y) {
  dot_rows<4>(kk_count, positions, w, bias, col, mult, lo, hi, y);
}

ZT_INT8_CLONES void dot_rows1(int64_t kk_count, int64_t positions, const int8_t* const* w,
                              const int32_t* bias, const int8_t* col, FixedMultiplier mult,
                              int32_t lo, int32_t hi, int8_t* y) {
  dot_rows<1>(kk_count, positions, w, bias, col, mult, lo, hi, y);
}

// A depthwise convolution, directly: each tap adds its weight times a (strided) input row into
// the int32 sums of an output row, so no im2col copy is made for its few multiply-adds.
ZT_INT8_CLONES void depthwise_s8(const NpuConvGeometry& g, int64_t rows, const int8_t* x,
                                 const int8_t* w, const int32_t* bias, FixedMultiplier mult,
                                 int32_t lo, int32_t hi, int8_t* y) {
  const int64_t oh = g.out_h(), ow = g.out_w(), k = g.kernel, s = g.stride, p = g.pad;
  std::vector<int32_t> acc(static_cast<size_t>(ow));
  for (int64_t plane = 0; plane < rows * g.in_c; ++plane) {
    const int64_t c = plane % g.in_c;
    const int8_t* in = x + plane * g.in_h * g.in_w;
    const int8_t* wc = w + c * k * k;
    for (int64_t oy = 0; oy < oh; ++oy) {
      std::fill(acc.begin(), acc.end(), bias ? bias[c] : 0);
      for (int64_t ky = 0; ky < k; ++ky) {
        const int64_t iy = oy * s - p + ky;
        if (iy < 0 || iy >= g.in_h) continue;
        for (int64_t kx = 0; kx < k; ++kx) {
          const auto wv = static_cast<int16_t>(wc[ky * k + kx]);
          const Inside r = inside(ow, g.in_w, kx, s, p);
          const int8_t* src = in + iy * g.in_w + r.first * s - p + kx;
          int32_t* a = acc.data() + r.first;
          const int64_t n = r.last - r.first;
          if (s == 1)
            for (int64_t j = 0; j < n; ++j) a[j] += static_cast<int16_t>(wv * src[j]);
          else
            for (int64_t j = 0; j < n; ++j) a[j] += static_cast<int16_t>(wv * src[j * s]);
        }
      }
      int8_t* out = y + (plane * oh + oy) * ow;
      for (int64_t j = 0; j < ow; ++j) out[j] = clamp_s8(requantize(acc[j], mult), lo, hi);
    }
  }
}

}  // namespace

void conv_s8(const NpuConvGeometry& g, int64_t rows, const int8_t* x, const int8_t* w,
             const int32_t* bias, FixedMultiplier mult, int32_t lo, int32_t hi, int8_t* y,
             int8_t* col) {
  const int64_t cg = g.in_c / g.groups, og = g.out_c / g.groups;
  const int64_t positions = g.out_h() * g.out_w(), kk_count = cg * g.kernel * g.kernel;
  const int64_t in_plane = g.in_h * g.in_w;
  if (cg == 1 && og == 1) return depthwise_s8(g, rows, x, w, bias, mult, lo, hi, y);
  const bool direct = g.col_bytes() == 0;
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const int8_t* xg = x + (n * g.in_c + grp * cg) * in_plane;
      if (!direct) im2col(g, cg, xg, col);
      const int8_t* src = direct ? xg : col;
      int64_t o = 0;
      for (; o + 4 <= og; o += 4) {
        const int64_t first = grp * og + o;
        const int8_t* wr[4];
        for (int i = 0; i < 4; ++i) wr[i] = w + (first + i) * kk_count;
        dot_rows4(kk_count, positions, wr, bias ? bias + first : nullptr, src, mult, lo, hi,
                  y + (n * g.out_c + first) * positions);
      }
      for (; o < og; ++o) {  // depthwise convolutions have one output per group
        const int64_t first = grp * og + o;
        const int8_t* wr[1] = {w + first * kk_count};
        dot_rows1(kk_count, positions, wr, bias ? bias + first : nullptr, src, mult, lo, hi,
                  y + (n * g.out_c + first) * positions);
      }
    }
}

void max_pool_s8(int64_t planes, int64_t h, int64_t w, int64_t k, int64_t stride, const int8_t* x,
                 int8_t* y) {
  const int64_t oh = (h - k) / stride + 1, ow = (w - k) / stride + 1;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        int8_t m = -128;
        for (int64_t ky = 0; ky < k; ++ky)
          for (int64_t kx = 0; kx < k; ++kx)
            m = std::max(m, x[(p * h + oy * stride + ky) * w + ox * stride + kx]);
        y[(p * oh + oy) * ow + ox] = m;
      }
}

void avg_pool_s8(int64_t planes, int64_t h, int64_t w, int64_t k, int64_t stride, const int8_t* x,
                 FixedMultiplier mult, int8_t* y) {
  const int64_t oh = (h - k) / stride + 1, ow = (w - k) / stride + 1;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        int32_t s = 0;
        for (int64_t ky = 0; ky < k; ++ky)
          for (int64_t kx = 0; kx < k; ++kx)
            s += x[(p * h + oy * stride + ky) * w + ox * stride + kx];
        y[(p * oh + oy) * ow + ox] = clamp_s8(requantize(s, mult), -127, 127);
      }
}

void global_max_pool_s8(int64_t planes, int64_t size, const int8_t* x, int8_t* y) {
  for (int64_t p = 0; p < planes; ++p) y[p] = *std::max_element(x + p * size, x + (p + 1) * size);
}

void global_avg_pool_s8(int64_t planes, int64_t size, const int8_t* x, FixedMultiplier mult,
                        int8_t* y) {
  for (int64_t p = 0; p < planes; ++p) {
    int32_t s = 0;
    for (int64_t i = 0; i < size; ++i) s += x[p * size + i];
    y[p] = clamp_s8(requantize(s, mult), -127, 127);
  }
}

void add_s8(int64_t n, const int8_t* a, FixedMultiplier ma, const int8_t* b, FixedMultiplier mb,
            int32_t lo, int32_t hi, int8_t* y) {
  constexpr int kExtra = 16;
  const FixedMultiplier fa{ma.m0, ma.shift + kExtra}, fb{mb.m0, mb.shift + kExtra};
  const FixedMultiplier down{1 << 30, 1 - kExtra};  // 2^-kExtra
  for (int64_t i = 0; i < n; ++i)
    y[i] = clamp_s8(requantize(requantize(a[i], fa) + requantize(b[i], fb), down), lo, hi);
}

void clamp_s8(int64_t n, const int8_t* x, int32_t lo, int32_t hi, int8_t* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = clamp_s8(x[i], lo, hi);
}

}  // namespace zotrain::kernels
