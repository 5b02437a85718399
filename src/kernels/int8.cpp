// NITI's integer arithmetic: range estimate, rounding shifts, requantization, int8 ReLU, max
// pooling and convolution through int8 patch matrices and gemm_s8 (or the active instruction
// set's direct kernel, kernel_set.h).
#include "kernels/int8.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>

#include "conv_walk.h"
#include "kernel_set.h"
#include "pool_walk.h"
#include "target_clones.h"
#include "zotrain/core/error.h"

namespace zotrain::kernels {

namespace {

// In int32 lanes (8 to a vector), widened only for the magnitude of the minimum.
ZT_CLONES int range_bits_s32(const int32_t* x, int64_t n) {
  int32_t hi = 0, lo = 0;
  for (int64_t i = 0; i < n; ++i) {
    hi = x[i] > hi ? x[i] : hi;
    lo = x[i] < lo ? x[i] : lo;
  }
  const int64_t neg = -static_cast<int64_t>(lo);
  return std::bit_width(static_cast<uint64_t>(hi > neg ? hi : neg));
}

template <typename Acc>
int range_bits_any(const Acc* x, int64_t n) {
  if constexpr (sizeof(Acc) == 4) return range_bits_s32(x, n);
  uint64_t amax = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t a = x[i] < 0 ? 0 - static_cast<uint64_t>(x[i]) : static_cast<uint64_t>(x[i]);
    amax = a > amax ? a : amax;
  }
  return std::bit_width(amax);
}

// Round-to-nearest shift to int8, branch-free so that it vectorizes: the hot path of every
// forward pass. Magnitudes up to 2^31 plus half of 2^30 fit in uint32.
template <typename T>
inline void round_shift_to_s8(const T* in, int64_t n, int s, int8_t* out) {
  const uint32_t half = s > 0 ? uint32_t{1} << (s - 1) : 0;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = in[i];
    const uint32_t mag = v < 0 ? 0u - static_cast<uint32_t>(v) : static_cast<uint32_t>(v);
    uint32_t r = (mag + half) >> s;
    r = r > 127 ? 127 : r;
    const int32_t m = static_cast<int32_t>(r);
    out[i] = static_cast<int8_t>(v < 0 ? -m : m);
  }
}

ZT_CLONES void round_shift_s32(const int32_t* acc, int64_t n, int s, int8_t* out) {
  round_shift_to_s8(acc, n, s, out);
}

ZT_CLONES void round_shift_s16(const int16_t* stage, int64_t n, int s, int8_t* out) {
  round_shift_to_s8(stage, n, s, out);
}

// Shift by a rounding to odd: the last kept bit ORed with "anything discarded" (stage_s16).
ZT_CLONES void round_to_odd_s16(const int32_t* acc, int64_t n, int a, int16_t* stage) {
  const uint32_t below = (uint32_t{1} << a) - 1;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = acc[i];
    const uint32_t mag = v < 0 ? 0u - static_cast<uint32_t>(v) : static_cast<uint32_t>(v);
    const int32_t odd = static_cast<int32_t>((mag >> a) | ((mag & below) != 0 ? 1u : 0u));
    stage[i] = static_cast<int16_t>(v < 0 ? -odd : odd);
  }
}

template <typename Acc>
int requantize_any(const Acc* acc, int64_t n, int bits, Rounding r, int8_t* out) {
  const int s = range_bits_any(acc, n) - bits;
  const int shift = s > 0 ? s : 0;
  if constexpr (sizeof(Acc) == 4) {
    if (r == Rounding::kNearest && shift < 31) {
      round_shift_s32(acc, n, shift, out);
      return shift;
    }
  }
  for (int64_t i = 0; i < n; ++i)
    out[i] =
        clip_s8(r == Rounding::kNearest ? round_shift(acc[i], shift) : psto_shift(acc[i], shift));
  return shift;
}

// pool_walk.h's 2x2 backward, cloned for AVX2, where its selects vectorize.
ZT_CLONES void max_pool_2x2_s8_backward(const Pool2dGeometry& g, int64_t planes, const int8_t* x,
                                        const int8_t* dy, int8_t* dx) {
  max_pool_2x2_backward(g, planes, x, dy, dx);
}

// The value of a window's maximum does not depend on which element is its first maximum: plain
// maxima, which vectorize (the sizes are copied out of g, which int8 stores could alias).
ZT_CLONES void max_pool_2x2_s8(const Pool2dGeometry& g, int64_t planes, const int8_t* x,
                               int8_t* y) {
  const int64_t in_w = g.in_w, out_h = g.out_h, out_w = g.out_w;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < out_h; ++oh) {
      const int8_t* r0 = x + p * g.in_plane() + 2 * oh * in_w;
      const int8_t* r1 = r0 + in_w;
      int8_t* yr = y + (p * out_h + oh) * out_w;
      for (int64_t ow = 0; ow < out_w; ++ow)
        yr[ow] =
            std::max(std::max(r0[2 * ow], r0[2 * ow + 1]), std::max(r1[2 * ow], r1[2 * ow + 1]));
    }
}

uint64_t magnitude(int64_t x) {
  return x < 0 ? 0 - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
}

int64_t with_sign(int64_t x, uint64_t m) {
  return x < 0 ? -static_cast<int64_t>(m) : static_cast<int64_t>(m);
}

}  // namespace

int range_bits(const int32_t* x, int64_t n) {
  return range_bits_any(x, n);
}

int range_bits(const int64_t* x, int64_t n) {
  return range_bits_any(x, n);
}

int64_t round_shift(int64_t x, int s) {
  if (s <= 0) return x;
  const uint64_t m = magnitude(x);
  return with_sign(x, (m + (uint64_t{1} << (s - 1))) >> s);
}

int64_t psto_shift(int64_t x, int s) {
  if (s <= 0) return x;
  const uint64_t m = magnitude(x);
  const uint64_t rest = m & ((uint64_t{1} << s) - 1);
  const int low_bits = s / 2;
  const uint64_t high = rest >> low_bits;
  uint64_t low = rest & ((uint64_t{1} << low_bits) - 1);
  if (s % 2) low <<= 1;
  return with_sign(x, (m >> s) + (high > low ? 1 : 0));
}

namespace {

// psto_shift of an int32 in 32-bit lanes, without branches, so that the loop vectorizes: the
// magnitude of any int32 fits a uint32, and a shifted magnitude past 255 moves an int8 weight to
// a bound as any larger one does, so it is capped there to stay in int32.
ZT_CLONES void subtract_psto_shifted_lanes(const int32_t* acc, int64_t n, int s, int8_t* w) {
  const int low_bits = s / 2, odd = s % 2;
  const uint32_t rest_mask = (uint32_t{1} << s) - 1, low_mask = (uint32_t{1} << low_bits) - 1;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t x = acc[i];
    const uint32_t m = x < 0 ? 0u - static_cast<uint32_t>(x) : static_cast<uint32_t>(x);
    const uint32_t rest = m & rest_mask;
    uint32_t r = (m >> s) + ((rest >> low_bits) > ((rest & low_mask) << odd) ? 1u : 0u);
    r = r < 255u ? r : 255u;
    const int32_t v = w[i] - (x < 0 ? -static_cast<int32_t>(r) : static_cast<int32_t>(r));
    w[i] = static_cast<int8_t>(v > 127 ? 127 : (v < -127 ? -127 : v));
  }
}

}  // namespace

void subtract_psto_shifted(const int32_t* acc, int64_t n, int s, int8_t* w) {
  if (s < 32) return subtract_psto_shifted_lanes(acc, n, s, w);
  for (int64_t i = 0; i < n; ++i) w[i] = clip_s8(w[i] - psto_shift(acc[i], s));
}

int requantize(const int32_t* acc, int64_t n, int bits, Rounding r, int8_t* out) {
  return requantize_any(acc, n, bits, r, out);
}

int requantize(const int64_t* acc, int64_t n, int bits, Rounding r, int8_t* out) {
  return requantize_any(acc, n, bits, r, out);
}

int stage_s16(const int32_t* acc, int64_t n, int16_t* stage) {
  if (const auto fast = active_kernels().stage_s16) return fast(acc, n, stage);
  const int range = range_bits(acc, n);
  stage_s16_in_range(acc, n, range, stage);
  return range;
}

void stage_s16_in_range(const int32_t* acc, int64_t n, int range, int16_t* stage) {
  if (const auto fast = active_kernels().stage_s16_in_range) return fast(acc, n, range, stage);
  round_to_odd_s16(acc, n, range > 15 ? range - 15 : 0, stage);
}

int finish_s16(const int16_t* stage, int64_t n, int64_t rows, const int32_t* ranges, int bits,
               int8_t* out, int floor) {
  int range = floor;
  for (int64_t r = 0; r < rows; ++r) range = ranges[r] > range ? ranges[r] : range;
  const int shift = range > bits ? range - bits : 0;
  const auto fast = active_kernels().round_shift_s16;
  for (int64_t r = 0; r < rows; ++r) {
    const int a = ranges[r] > 15 ? ranges[r] - 15 : 0;
    (fast ? fast : round_shift_s16)(stage + r * n, n, shift - a, out + r * n);
  }
  return shift;
}

namespace {

// The flipped int8 weights of an input gradient by convolution, rounded up to keep the direct
// kernel's scratch after them aligned.
int64_t flipped_bytes(const Conv2dGeometry& g) {
  return (weight_numel(g) + 63) / 64 * 64;
}

}  // namespace

namespace {

// conv2d_s8_backward_weight's scratch for `images` images a product
// (conv2d_s8_weight_gradient_images): the int8 patch matrices side by side, [patch, images *
// out_plane], and 32 bytes of slack; with more than one image, their dy side by side, [out_c,
// images * out_plane]; the padded images (stride 1) and 32 bytes of slack; the int32 weight
// gradient of one product (byte offsets).
struct WeightGradientLayout {
  int64_t images, dy, image, dw_image, end;
};
int64_t round_64(int64_t bytes) {
  return (bytes + 63) / 64 * 64;
}
WeightGradientLayout weight_gradient_layout(const Conv2dGeometry& g) {
  WeightGradientLayout l;
  l.images = conv2d_s8_weight_gradient_images(g);
  l.dy = round_64(g.col_floats() * l.images + 32);
  l.image = l.dy + (l.images > 1 ? round_64(g.out_numel() * l.images) : 0);
  const int64_t padded = g.in_c * (g.in_h + 2 * g.pad) * (g.in_w + 2 * g.pad);
  l.dw_image = l.image + round_64(padded * l.images + 32);
  l.end = l.dw_image + g.out_c * g.patch_size() * 4;
  return l;
}

// n bytes from src to dst as whole 32-byte copies, the last one overlapping the one before, or
// one copy past the end where n < 32 (both have 32 bytes of slack): no call for a short run.
inline void copy_run(int8_t* dst, const int8_t* src, int64_t n) {
  if (n < 32) return __builtin_memcpy(dst, src, 32), void();
  for (int64_t i = 0; i + 32 < n; i += 32) __builtin_memcpy(dst + i, src + i, 32);
  __builtin_memcpy(dst + n - 32, src + n - 32, 32);
}

// The int8 patch matrices of `images` images of a stride-1 convolution side by side (row r of
// image b at col + r * images * out_plane + b * out_plane), their runs copied from padded copies
// xp of the images whose padding the caller has zeroed. The runs are written in address order,
// so each one's spill past its end is overwritten by the next.
void im2col_s8_padded(const Conv2dGeometry& g, int64_t images, const int8_t* x, int8_t* xp,
                      int8_t* col) {
  // Locals: int8 stores may alias g.
  const int64_t in_c = g.in_c, in_h = g.in_h, in_w = g.in_w, k = g.k, pad = g.pad;
  const int64_t out_h = g.out_h, out_w = g.out_w, hp = in_h + 2 * pad, wp = in_w + 2 * pad;
  const int64_t padded = in_c * hp * wp, in_numel = in_c * in_h * in_w;
  for (int64_t b = 0; b < images; ++b)
    for (int64_t c = 0; c < in_c; ++c)
      for (int64_t ih = 0; ih < in_h; ++ih)
        __builtin_memcpy(xp + b * padded + (c * hp + ih + pad) * wp + pad,
                         x + b * in_numel + (c * in_h + ih) * in_w, static_cast<size_t>(in_w));
  int8_t* dst = col;
  for (int64_t c = 0; c < in_c; ++c)
    for (int64_t ki = 0; ki < k; ++ki)
      for (int64_t kj = 0; kj < k; ++kj)
        for (int64_t b = 0; b < images; ++b)
          for (int64_t oh = 0; oh < out_h; ++oh, dst += out_w)
            copy_run(dst, xp + b * padded + (c * hp + oh + ki) * wp + kj, out_w);
}

}  // namespace

int64_t conv2d_s8_forward_work_bytes(const Conv2dGeometry& g) {
  int64_t bytes = g.col_floats();  // an int8 patch matrix
  // The most any compiled set's direct kernel takes, so that a plan does not depend on the CPU.
  for (const KernelSet* set : compiled_kernel_sets())
    if (set->conv2d_s8_direct_work_bytes)
      bytes = std::max(bytes, set->conv2d_s8_direct_work_bytes(g));
  return bytes;
}

int64_t conv2d_s8_work_bytes(const Conv2dGeometry& g) {
  // The forward's; an int32 patch matrix (input gradient) and the int32 weight gradient of one
  // image; the weight gradient's layout (weight_gradient_layout); or a direct kernel's input
  // gradient by convolution, in whichever set is active.
  const int64_t dw = g.out_c * g.patch_size();
  const WeightGradientLayout wg = weight_gradient_layout(g);
  int64_t bytes = std::max({conv2d_s8_forward_work_bytes(g), (g.col_floats() + dw) * 4, wg.end});
  if (backward_data_by_convolution(g))
    for (const KernelSet* set : compiled_kernel_sets())
      if (set->conv2d_s8_direct_work_bytes)
        bytes = std::max(bytes, flipped_bytes(g) + set->conv2d_s8_direct_work_bytes(transposed(g)));
  return bytes;
}

const char* int8_kernels_name() {
  return active_kernels().int8_name;
}

uint64_t new_weights_key() {
  // Spread by an odd multiplier: distinct and never 0, and unlike the small integers stale
  // scratch memory holds. The counter is pointer-wide, the widest lock-free atomic everywhere
  // (a 64-bit one needs libatomic on 32-bit Arm: the M55 build).
  static std::atomic<uintptr_t> last{0};
  return static_cast<uint64_t>(++last) * 0x9E3779B97F4A7C15ull;
}

void conv2d_s8_forward(const Conv2dGeometry& g, int64_t images, const int8_t* x, const int8_t* w,
                       int32_t* y, void* work, uint64_t weights_key) {
  if (const auto direct = active_kernels().conv2d_s8_direct)
    return direct(g, images, x, w, y, work, weights_key);
  int8_t* col = static_cast<int8_t*>(work);
  for (int64_t n = 0; n < images; ++n) {
    im2col_any(g, x + n * g.in_numel(), col);
    gemm_s8(false, false, g.out_c, g.out_plane(), g.patch_size(), w, g.patch_size(), col,
            g.out_plane(), y + n * g.out_numel(), g.out_plane(), false);
  }
}

int64_t linear_s8_work_bytes(int64_t n, int64_t k) {
  int64_t bytes = 0;  // the most any compiled set takes, so that a plan does not depend on the CPU
  for (const KernelSet* set : compiled_kernel_sets())
    if (set->linear_s8_work_bytes) bytes = std::max(bytes, set->linear_s8_work_bytes(n, k));
  return bytes;
}

void linear_s8_forward(int64_t m, int64_t n, int64_t k, const int8_t* a, const int8_t* b,
                       int32_t* c, void* work, uint64_t weights_key) {
  const auto packed = active_kernels().linear_s8;
  if (packed && packed(m, n, k, a, b, c, work, weights_key)) return;
  gemm_s8(false, true, m, n, k, a, k, b, k, c, n, false);
}

bool conv2d_s8_pools(const Conv2dGeometry& g, const Pool2dGeometry& pool) {
  const auto pools = active_kernels().conv2d_s8_direct_pools;
  return pools && pools(g, pool);
}

void conv2d_s8_forward_max_pooled(const Conv2dGeometry& g, const Pool2dGeometry& pool,
                                  int64_t images, const int8_t* x, const int8_t* w, int32_t* y,
                                  int32_t* ranges, void* work, uint64_t weights_key) {
  ZT_ASSERT(conv2d_s8_pools(g, pool));
  active_kernels().conv2d_s8_direct_max_pooled(g, pool, images, x, w, y, ranges, work, weights_key);
}

// With a direct kernel and stride 1, a forward convolution of dy (conv_walk.h); else w^T dy as
// patch matrices, added back to the pixels they came from. Both are exact integer sums.
void conv2d_s8_backward_data(const Conv2dGeometry& g, int64_t images, const int8_t* dy,
                             const int8_t* w, int32_t* dx, void* work) {
  const auto direct = active_kernels().conv2d_s8_direct;
  if (direct && backward_data_by_convolution(g)) {
    int8_t* flipped = static_cast<int8_t*>(work);
    flip_weights(g, w, flipped);
    return direct(transposed(g), images, dy, flipped, dx, flipped + flipped_bytes(g), 0);
  }
  int32_t* col = static_cast<int32_t*>(work);
  for (int64_t n = 0; n < images; ++n) {
    gemm_s8(true, false, g.patch_size(), g.out_plane(), g.out_c, w, g.patch_size(),
            dy + n * g.out_numel(), g.out_plane(), col, g.out_plane(), false);
    int32_t* dxn = dx + n * g.in_numel();
    for (int64_t i = 0; i < g.in_numel(); ++i) dxn[i] = 0;
    col2im_add_any(g, col, dxn);
  }
}

int64_t conv2d_s8_weight_gradient_images(const Conv2dGeometry& g) {
  // A product per image reduced LeNet-5 conv2's 64 positions only: the tiles' horizontal sums
  // and set-up outweighed their multiplies. Images side by side reduce about kReduce positions
  // (1024 and 2048 measured 5 % faster on the INT8 BP step, for 4-13 % more of its plan);
  // |dy x| <= 2^14, so the int32 sums hold 2^17 - 1 products.
  constexpr int64_t kReduce = 512, kMaxProducts = (int64_t{1} << 17) - 1;
  if (g.stride != 1) return 1;  // im2col_any writes one image's matrix
  return std::max<int64_t>(1, std::min(kReduce, kMaxProducts) / g.out_plane());
}

void conv2d_s8_backward_weight(const Conv2dGeometry& g, int64_t images, const int8_t* x,
                               const int8_t* dy, int64_t* dw, void* work) {
  int8_t* col = static_cast<int8_t*>(work);
  const int64_t dw_numel = g.out_c * g.patch_size(), plane = g.out_plane();
  const WeightGradientLayout wg = weight_gradient_layout(g);
  int8_t* dy_side = col + wg.dy;
  int8_t* xp = col + wg.image;
  int32_t* dw_part = reinterpret_cast<int32_t*>(col + wg.dw_image);
  if (g.stride == 1) __builtin_memset(xp, 0, static_cast<size_t>(wg.dw_image - wg.image));
  for (int64_t n0 = 0; n0 < images; n0 += wg.images) {
    const int64_t group = std::min(wg.images, images - n0), k = group * plane;
    const int8_t* dy_n = dy + n0 * g.out_numel();
    if (g.stride == 1)
      im2col_s8_padded(g, group, x + n0 * g.in_numel(), xp, col);
    else
      im2col_any(g, x + n0 * g.in_numel(), col);
    if (group > 1) {
      for (int64_t o = 0; o < g.out_c; ++o)
        for (int64_t b = 0; b < group; ++b)
          std::memcpy(dy_side + o * k + b * plane, dy_n + b * g.out_numel() + o * plane,
                      static_cast<size_t>(plane));
      dy_n = dy_side;
    }
    gemm_s8(false, true, g.out_c, g.patch_size(), k, dy_n, k, col, k, dw_part, g.patch_size(),
            false);
    for (int64_t i = 0; i < dw_numel; ++i) dw[i] += dw_part[i];
  }
}

// Byte maxima need SSE4.1 or AVX2 to vectorize: x86-64's baseline has none.
ZT_CLONES void relu_s8(const int8_t* x, int8_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;
}

// dy is loaded before the select: a load inside one arm is a branch, mispredicted on half of
// the elements, and keeps the loop from vectorizing.
ZT_CLONES void relu_s8_backward(const int8_t* y, const int8_t* dy, int8_t* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const int8_t g = dy[i];
    dx[i] = y[i] > 0 ? g : 0;
  }
}

int max_pool2d_s32_forward(const Pool2dGeometry& g, int64_t planes, const int32_t* x, int32_t* y,
                           bool range) {
  if (is_2x2_stride_2(g)) {
    const int bits = active_kernels().max_pool_2x2_s32(g, planes, x, y, range);
    if (!range || (g.in_h % 2 == 0 && g.in_w % 2 == 0)) return bits;  // every element was read
  } else {
    max_pool_forward_any(g, planes, x, y);
  }
  return range ? range_bits(x, planes * g.in_plane()) : 0;
}

void max_pool2d_s8_forward(const Pool2dGeometry& g, int64_t planes, const int8_t* x, int8_t* y) {
  if (is_2x2_stride_2(g)) {
    const auto fast = active_kernels().max_pool_2x2_s8;
    return (fast && g.out_w >= 4 ? fast : max_pool_2x2_s8)(g, planes, x, y);
  }
  max_pool_forward_any(g, planes, x, y);
}

void max_pool2d_s8_backward(const Pool2dGeometry& g, int64_t planes, const int8_t* x,
                            const int8_t* dy, int8_t* dx) {
  if (is_2x2_stride_2(g)) {
    const auto fast = active_kernels().max_pool_2x2_s8_backward;
    return (fast && g.out_w >= 4 ? fast : max_pool_2x2_s8_backward)(g, planes, x, dy, dx);
  }
  max_pool_backward_any(g, planes, x, dy, dx);
}

}  // namespace zotrain::kernels
