#include "kernels/npu.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kernel_set.h"
#include "kernels/byte_gather.h"
#include "kernels/int8.h"
#include "target_clones.h"
#include "zotrain/core/error.h"

namespace zotrain::kernels {

FixedMultiplier quantize_multiplier(double m) {
  if (!(m > 0) || !std::isfinite(m) || m >= 2147483648.0)
    ZT_THROW(InputError("requantization multiplier " + std::to_string(m) +
                        ": expected a finite value in (0, 2^31)"));
  int exp = 0;
  const double q = std::frexp(m, &exp);  // m = q * 2^exp, q in [0.5, 1)
  auto m0 = static_cast<int64_t>(std::llround(q * 2147483648.0));
  if (m0 == (int64_t{1} << 31)) {  // q rounded up to 1
    m0 /= 2;
    ++exp;
  }
  return {static_cast<int32_t>(m0), exp};
}

namespace {

// The int8 path's geometry of one group.
Conv2dGeometry conv_geometry(const NpuConvGeometry& g) {
  return Conv2dGeometry::make(g.in_c / g.groups, g.in_h, g.in_w, g.out_c / g.groups, g.kernel,
                              g.stride, g.pad);
}

// conv_s8 computes the int32 sums of `images` images (rows) at a time, about kSumInts of them
// so that they stay in cache until requantized; grouped convolutions one image at a time, as
// the groups of several images are not contiguous.
struct Sums {
  int64_t images, positions;
};
// A linear layer as a convolution: 1x1 images, kernel 1, one group.
bool is_linear(const NpuConvGeometry& g) {
  return g.in_h * g.in_w == 1 && g.kernel == 1 && g.pad == 0 && g.groups == 1;
}

Sums sums_plan(const NpuConvGeometry& g) {
  constexpr int64_t kSumInts = 16384;
  const int64_t positions = g.out_h() * g.out_w();
  return {g.groups == 1 ? std::max<int64_t>(1, kSumInts / (g.out_c * positions)) : 1, positions};
}

// The portable quantize_s8 (kernel_set.h); NaN gives -127, as in the vector kernels.
void quantize_s8_portable(const float* x, int64_t n, double scale, int8_t* y) {
  for (int64_t i = 0; i < n; ++i) {
    const double r = std::round(static_cast<double>(x[i]) / scale);
    y[i] = static_cast<int8_t>(r >= -127 ? (r <= 127 ? r : 127) : -127);
  }
}

// The portable requantize_s8 (kernel_set.h).
void requantize_s8(int64_t n, const int32_t* acc, int32_t bias, FixedMultiplier mult, int32_t lo,
                   int32_t hi, int8_t* y) {
  for (int64_t j = 0; j < n; ++j) y[j] = clamp_s8(requantize(acc[j] + bias, mult), lo, hi);
}

// y[i, o, j] = clamp(requantize(bias[o] + sums[i, o, j])) for `images` outputs [out_c, positions],
// the bias added in place first, so that the requantization runs over all of them at once.
// The bias added as the sums are read, a plane at a time, for planes of 64 positions or more;
// smaller planes (a call each would cost its set-up and a partial last vector) and a linear
// layer's (one position) have it added to their sums first.
ZT_CLONES void requantize_sums(int64_t images, int64_t out_c, int64_t positions, int32_t* sums,
                               const int32_t* bias, FixedMultiplier mult, int32_t lo, int32_t hi,
                               int8_t* y) {
  constexpr int64_t kPlaneAtATime = 64;
  const auto fast = active_kernels().requantize_s8;
  const auto rq = fast ? fast : requantize_s8;
  if (!bias || positions < kPlaneAtATime) {
    // Image by image and channel by channel, so that no plane index is divided; a linear layer's
    // along its channels, the loop that vectorizes.
    if (bias && positions == 1)
      for (int64_t i = 0; i < images; ++i)
        for (int64_t o = 0; o < out_c; ++o) sums[i * out_c + o] += bias[o];
    else if (bias)
      for (int64_t i = 0; i < images; ++i)
        for (int64_t o = 0; o < out_c; ++o)
          for (int64_t j = 0; j < positions; ++j) sums[(i * out_c + o) * positions + j] += bias[o];
    return rq(images * out_c * positions, sums, 0, mult, lo, hi, y);
  }
  for (int64_t i = 0; i < images; ++i)
    for (int64_t o = 0; o < out_c; ++o) {
      const int64_t plane = i * out_c + o;
      rq(positions, sums + plane * positions, bias[o], mult, lo, hi, y + plane * positions);
    }
}

// The portable depthwise_taps_s8 (kernel_set.h), over exactly n outputs, kBlock int32 sums at a
// time on the stack.
ZT_CLONES void depthwise_taps_s8(int64_t n, int taps, const int8_t* w, const int64_t* off,
                                 const int8_t* in, int32_t bias, FixedMultiplier mult, int32_t lo,
                                 int32_t hi, int8_t* y) {
  constexpr int64_t kBlock = 256;
  int32_t acc[kBlock];
  for (int64_t q0 = 0; q0 < n; q0 += kBlock) {
    const int64_t len = std::min(kBlock, n - q0);
    std::fill(acc, acc + len, bias);
    for (int t = 0; t < taps; ++t) {
      // int8 x int8 products fit int16, the narrower multiply.
      const auto wt = static_cast<int16_t>(w[t]);
      const int8_t* __restrict src = in + q0 + off[t];
      for (int64_t q = 0; q < len; ++q) acc[q] += static_cast<int16_t>(wt * src[q]);
    }
    requantize_s8(len, acc, 0, mult, lo, hi, y + q0);
  }
}

// A depthwise convolution, one channel at a time over a few images. The zero-padded planes are
// split into their stride x stride phases (phase (a, b) holds the padded pixels (i * stride + a,
// j * stride + b)), the images' phase planes back to back, so that every tap reads one phase at
// a fixed offset from the output position: with the phases' row length as the output's, each tap
// is one multiply-add over the images' planes of sums, long enough to vectorize, whatever the
// stride and however small the plane. The sums past each output row (wq - out_w) and past the
// out_h rows of an image are dropped. At stride 1 neighbours share their padding: p zero columns
// between rows and p zero rows between images serve as the right (bottom) padding of one and the
// left (top) padding of the next, so that fewer dropped sums are computed (a 7x7 plane with
// padding 1: 64 sums for its 49 outputs, not 81).
ZT_CLONES void depthwise_s8(const NpuConvGeometry& g, int64_t rows, const int8_t* x,
                            const int8_t* w, const int32_t* bias, FixedMultiplier mult, int32_t lo,
                            int32_t hi, int8_t* y) {
  const int64_t oh = g.out_h(), ow = g.out_w(), k = g.kernel, s = g.stride, p = g.pad;
  // Shared padding needs a sum per output in the row and image lengths: p < k.
  const int64_t pads = s == 1 && p < k ? 1 : 2;
  const int64_t hq = (g.in_h + pads * p + s - 1) / s, wq = (g.in_w + pads * p + s - 1) / s;
  // About kBytes of phases at a time, which stay in cache while the taps read them.
  constexpr int64_t kBytes = 16384;
  const int64_t plane = hq * wq;
  const int64_t images = std::max<int64_t>(1, std::min(rows, kBytes / (s * s * plane)));
  // An image's last output row reads (k - 1) / s past its phase plane (see offsets below; with
  // shared padding, the last image's bottom padding and k - 1 more), and the last vector of the
  // active set's kernel up to kMaxDepthwiseLanes past the last phase.
  const int64_t phase = images * plane + (pads == 1 ? p * wq + k - 1 : (k - 1) / s);
  std::vector<int8_t> phases(static_cast<size_t>(s * s * phase + kMaxDepthwiseLanes));
  std::vector<int8_t> out(static_cast<size_t>(images * plane + kMaxDepthwiseLanes));
  std::vector<int64_t> off(static_cast<size_t>(k * k));
  for (int64_t ky = 0; ky < k; ++ky)
    for (int64_t kx = 0; kx < k; ++kx)
      off[ky * k + kx] = (ky % s * s + kx % s) * phase + ky / s * wq + kx / s;
  // Image 0's phase planes from its input plane, and its outputs from theirs at the row pitch wq:
  // plans of 16-byte moves (byte_gather.h), which image i runs at i * plane. Every byte of an
  // image's phase planes is written, its padding as zeros; the bytes after the last image's
  // planes stay the zeros they start as.
  const int64_t in_plane = g.in_h * g.in_w, y_plane = oh * ow;
  std::vector<int64_t> from(static_cast<size_t>((s * s - 1) * phase + plane), kByteKept);
  for (int64_t a = 0; a < s; ++a)
    for (int64_t b = 0; b < s; ++b)
      for (int64_t r = 0; r < hq; ++r)
        for (int64_t j = 0; j < wq; ++j) {
          const int64_t iy = r * s + a - p, ix = j * s + b - p;
          const bool inside = iy >= 0 && iy < g.in_h && ix >= 0 && ix < g.in_w;
          from[(a * s + b) * phase + r * wq + j] = inside ? iy * g.in_w + ix : kByteZero;
        }
  const BytePlan stage = plan_bytes(from, in_plane);
  from.assign(static_cast<size_t>(y_plane), 0);
  for (int64_t oy = 0; oy < oh; ++oy)
    for (int64_t ox = 0; ox < ow; ++ox) from[oy * ow + ox] = oy * wq + ox;
  const BytePlan unstage = plan_bytes(from, plane + kMaxDepthwiseLanes);
  const auto fast = k * k <= kMaxDepthwiseTaps ? active_kernels().depthwise_taps_s8 : nullptr;
  for (int64_t c = 0; c < g.in_c; ++c) {
    for (int64_t n0 = 0; n0 < rows; n0 += images) {
      const int64_t m = std::min(images, rows - n0);
      gather_bytes(stage, m, x + (n0 * g.in_c + c) * in_plane, g.in_c * in_plane, phases.data(),
                   plane);
      (fast ? fast : depthwise_taps_s8)((m - 1) * plane + oh * wq, static_cast<int>(k * k),
                                        w + c * k * k, off.data(), phases.data(),
                                        bias ? bias[c] : 0, mult, lo, hi, out.data());
      gather_bytes(unstage, m, out.data(), plane, y + (n0 * g.in_c + c) * y_plane,
                   g.in_c * y_plane);
    }
  }
}

// The portable add_s8_steps (kernel_set.h).
void add_s8_steps(int64_t n, const int8_t* a, FixedMultiplier ma, const int8_t* b,
                  FixedMultiplier mb, FixedMultiplier down, int32_t lo, int32_t hi, int8_t* y) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = clamp_s8(requantize(requantize(a[i], ma) + requantize(b[i], mb), down), lo, hi);
}

}  // namespace

int64_t NpuConvGeometry::work_bytes(const Pool2dGeometry* pool) const {
  if (in_c == groups && out_c == groups) return 0;  // depthwise: no scratch
  const Sums s = sums_plan(*this);
  const int64_t pooled = pool ? s.images * out_c * pool->out_plane() : 0;
  return (s.images * out_c / groups * s.positions + pooled) *
             static_cast<int64_t>(sizeof(int32_t)) +
         std::max(conv2d_s8_work_bytes(conv_geometry(*this)),
                  is_linear(*this) ? linear_s8_work_bytes(out_c, in_c) : 0);
}

bool conv_s8_pools(const NpuConvGeometry& g, FixedMultiplier mult, const Pool2dGeometry& pool) {
  return g.groups == 1 && !is_linear(g) && mult.shift <= 0 && pool.pad == 0 &&
         pool.in_h == g.out_h() && pool.in_w == g.out_w();
}

void quantize_s8(const float* x, int64_t n, double scale, int8_t* y) {
  // The vector kernels multiply by the reciprocal in float where nothing over- or underflows.
  const auto fast = scale >= 0x1p-100 && scale <= 0x1p100 ? active_kernels().quantize_s8 : nullptr;
  (fast ? fast : quantize_s8_portable)(x, n, scale, y);
}

void conv_s8(const NpuConvGeometry& g, int64_t rows, const int8_t* x, const int8_t* w,
             const int32_t* bias, FixedMultiplier mult, int32_t lo, int32_t hi, int8_t* y,
             void* work, const Pool2dGeometry* pool) {
  ZT_ASSERT(!pool || conv_s8_pools(g, mult, *pool));
  const int64_t cg = g.in_c / g.groups, og = g.out_c / g.groups;
  if (cg == 1 && og == 1) return depthwise_s8(g, rows, x, w, bias, mult, lo, hi, y);
  const Sums s = sums_plan(g);
  int32_t* sums = static_cast<int32_t*>(work);
  // Kernels of the active set that requantize in their epilogue write y without int32 sums.
  const KernelSet& set = active_kernels();
  if (is_linear(g)) {
    // A linear layer: rows x out_c dot products of contiguous rows, the int8 path's (its weights
    // packed once, into the scratch after the sums).
    void* packed = sums + s.images * g.out_c;
    const uint64_t key = new_weights_key();
    const auto requantized = set.linear_s8_requantized;
    for (int64_t n = 0; n < rows; n += s.images) {
      const int64_t m = std::min(s.images, rows - n);
      const int8_t* xn = x + n * g.in_c;
      int8_t* yn = y + n * g.out_c;
      if (requantized &&
          requantized(m, g.out_c, g.in_c, xn, w, {bias, mult, lo, hi}, yn, packed, key))
        continue;
      linear_s8_forward(m, g.out_c, g.in_c, xn, w, sums, packed, key);
      requantize_sums(m, g.out_c, 1, sums, bias, mult, lo, hi, yn);
    }
    return;
  }
  // The int8 path's convolution (no bias) of one group, over a few images at a time when the
  // groups are whole images.
  const Conv2dGeometry cg2 = conv_geometry(g);
  int32_t* pooled = sums + s.images * s.positions * og;  // with pool: its maxima
  void* conv_work = pooled + (pool ? s.images * og * pool->out_plane() : 0);
  const int64_t in_plane = g.in_h * g.in_w;
  // One group's weights throughout: packed once by the direct kernel.
  const uint64_t key = g.groups == 1 ? new_weights_key() : 0;
  const auto requantized =
      set.conv2d_s8_direct_requantizes && set.conv2d_s8_direct_requantizes(cg2, pool)
          ? set.conv2d_s8_direct_requantized
          : nullptr;
  const int64_t out_plane = pool ? pool->out_plane() : s.positions;
  for (int64_t n = 0; n < rows; n += s.images) {
    const int64_t images = std::min(s.images, rows - n);
    for (int64_t grp = 0; grp < g.groups; ++grp) {  // with pool: one group
      const int64_t first = grp * og;
      const int8_t* xn = x + (n * g.in_c + grp * cg) * in_plane;
      const int8_t* wg = w + first * cg2.patch_size();
      const int32_t* bias_g = bias ? bias + first : nullptr;
      int8_t* yg = y + (n * g.out_c + first) * out_plane;
      if (requantized) {
        requantized(cg2, pool, images, xn, wg, {bias_g, mult, lo, hi}, yg, conv_work, key);
        continue;
      }
      if (!pool) {
        conv2d_s8_forward(cg2, images, xn, wg, sums, conv_work, key);
        requantize_sums(images, og, s.positions, sums, bias_g, mult, lo, hi, yg);
        continue;
      }
      if (conv2d_s8_pools(cg2, *pool)) {
        conv2d_s8_forward_max_pooled(cg2, *pool, images, xn, wg, pooled, nullptr, conv_work, key);
      } else {
        conv2d_s8_forward(cg2, images, xn, wg, sums, conv_work, key);
        max_pool2d_s32_forward(*pool, images * og, sums, pooled, false);
      }
      requantize_sums(images, og, out_plane, pooled, bias, mult, lo, hi, yg);
    }
  }
}

// The training path's kernel (vectorized for 2x2 windows): the same maxima.
void max_pool_s8(int64_t planes, int64_t h, int64_t w, int64_t k, int64_t stride, int64_t pad,
                 const int8_t* x, int8_t* y) {
  max_pool2d_s8_forward(Pool2dGeometry::make(h, w, k, stride, pad), planes, x, y);
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
  const auto fast = active_kernels().add_s8_steps;
  (fast ? fast : add_s8_steps)(n, a, fa, b, fb, down, lo, hi, y);
}

void clamp_s8(int64_t n, const int8_t* x, int32_t lo, int32_t hi, int8_t* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = clamp_s8(x[i], lo, hi);
}

namespace {

// The active set's name where it has the kernel, else the portable set's.
const char* set_running(bool has_kernel) {
  return kernel_isa_name(has_kernel ? active_kernels().isa : KernelIsa::kPortable);
}

}  // namespace

const char* npu_kernels_name() {
  return set_running(active_kernels().requantize_s8 != nullptr);
}

const char* npu_staging_kernels_name() {
  return set_running(active_kernels().gather_bytes != nullptr);
}

bool npu_requantizes_in_epilogue() {
  return active_kernels().conv2d_s8_direct_requantized != nullptr;
}

}  // namespace zotrain::kernels
