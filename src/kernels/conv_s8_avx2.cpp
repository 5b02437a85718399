// The AVX2 int8 convolution: register tiles of int32 sums of groups of products, multiplied
// either way of int8_products_avx2.h (Unsigned, groups of 4 taps, for inputs in [0, 127], else
// Widened, pairs), reading a padded copy of the image in place of a patch matrix. Integer sums
// are exact, so the results are bit for bit the portable kernel's whatever the order of the taps.
//
// Two layouts, as the f32 kernels (simd_kernels.h); the plan picks the one that wastes fewer
// multiply-adds on padding:
// - Channel rows (stride 1): a tile is 6 output channels x 16 positions of the output laid out
//   with the padded image's row length wp. Tap t of position q reads padded element off[t] + q,
//   so the operands are contiguous runs of the image, interleaved a group of taps at a time; the
//   wp - out_w positions past each output row are computed and dropped.
// - Pixel rows (any stride): a tile is 6 output pixels x 16 output channels. The image is
//   copied channels-last (HWC), in the multiply's element type, so that a kernel row's k * in_c
//   taps of a pixel are contiguous and each group of them one 32-bit broadcast; the weights are
//   packed in panels of 16 channels.
#include "int8_avx2.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include "avx2_target.h"
#include "int8_products_avx2.h"

namespace zotrain::kernels::avx2 {

namespace {

constexpr int kMR = 6;       // tile rows: 12 accumulators, 2 B vectors, a broadcast
constexpr int64_t kNR = 16;  // tile columns (two vectors of 8 int32)

struct DirectPlan {
  bool channel_rows;
  int group;  // taps a 32-bit lane sums: the multiply's kGroup
  int64_t hp, wp;
  int64_t groups;      // groups of taps
  int64_t positions;   // channel rows: output positions computed, a multiple of kNR
  int64_t row_groups;  // pixel rows: groups of a kernel row's k * in_c taps
  int64_t panels;      // pixel rows: panels of kNR output channels
  int64_t image;       // bytes of the padded image, a multiple of 4
  int64_t weights;     // bytes of the packed weights, 4 a group: channel rows [out_c, groups],
                       // pixel rows [panels, groups, kNR]
  int64_t products;    // products computed per image, padding included
};

int64_t round_up(int64_t a, int64_t b) {
  return (a + b - 1) / b * b;
}

DirectPlan direct_plan(const Conv2dGeometry& g, int group) {
  DirectPlan p{};
  p.group = group;
  p.hp = g.in_h + 2 * g.pad;
  p.wp = g.in_w + 2 * g.pad;
  p.panels = (g.out_c + kNR - 1) / kNR;
  const int64_t run = g.k * g.in_c;
  p.row_groups = (run + group - 1) / group;
  const int64_t channel_groups = (g.patch_size() + group - 1) / group;
  // Useful over computed multiply-adds, compared as cross products: channel rows compute wp
  // positions per output row, channels in whole tiles and taps in whole groups; pixel rows whole
  // panels of channels and each kernel row's taps in whole groups.
  const int64_t channel_num = g.out_w * g.out_c * g.patch_size();
  const int64_t channel_den = p.wp * round_up(g.out_c, kMR) * group * channel_groups;
  const int64_t pixel_num = g.out_c * run, pixel_den = p.panels * kNR * group * p.row_groups;
  p.channel_rows = g.stride == 1 && channel_num * pixel_den >= pixel_num * channel_den;
  if (p.channel_rows) {
    p.groups = channel_groups;
    p.positions = round_up(g.out_h * p.wp, kNR);
    // The last tile reads 16 bytes from the last tap's offset past its first position.
    const int64_t last_tap = ((g.in_c - 1) * p.hp + g.k - 1) * p.wp + g.k - 1;
    p.image = round_up(p.positions + last_tap, 4);
    p.weights = 4 * g.out_c * p.groups;
    p.products = p.positions * round_up(g.out_c, kMR) * group * p.groups;
  } else {
    p.groups = g.k * p.row_groups;
    // The last group of the last pixel reads up to group - 1 elements past the image; elements
    // are 4 / group bytes.
    p.image = round_up((p.hp * p.wp * g.in_c + group) * (4 / group), 4);
    p.weights = 4 * p.panels * p.groups * kNR;
    p.products = round_up(g.out_plane(), kMR) * p.panels * kNR * group * p.groups;
  }
  return p;
}

// Bytes of scratch for plan p: the padded image, the packed weights, the int32 offsets (one a
// tap, of group * groups taps; pixel rows use one a group).
int64_t plan_bytes(const DirectPlan& p) {
  return p.image + p.weights + 4 * p.group * p.groups;
}

}  // namespace

// Either multiply's plan_bytes, which conv2d_s8_direct chooses by the input.
int64_t conv2d_s8_direct_work_bytes(const Conv2dGeometry& g) {
  const int64_t widened = plan_bytes(direct_plan(g, Widened::kGroup));
  const int64_t unsigned_bytes = plan_bytes(direct_plan(g, Unsigned::kGroup));
  return widened > unsigned_bytes ? widened : unsigned_bytes;
}

namespace {

// The scratch of conv2d_s8_direct_work_bytes.
struct Scratch {
  void* image;    // the padded image: int8 (channel rows) or the multiply's Elem (pixel rows)
  char* weights;  // the packed weights, in the multiply's Elem
  int32_t* off;   // the tap (channel rows) or group (pixel rows) offsets
};

Scratch scratch(const DirectPlan& p, void* work) {
  Scratch s;
  s.image = work;
  s.weights = static_cast<char*>(work) + p.image;
  s.off = reinterpret_cast<int32_t*>(s.weights + p.weights);
  return s;
}

template <int MR>
using Acc = __m256i[MR][2];

// ---- Channel rows ----

// acc[i] = the sums of output channel i (weights w + i * 4 groups bytes) over all groups of
// taps, for positions xq.. + 15 in the lane order of vpunpck (acc[i][0]: 0-3, 8-11; acc[i][1]:
// 4-7, 12-15).
template <class P, int MR>
ZT_AVX2_INLINE void channel_sums(int64_t groups, const int8_t* xq, const char* w,
                                 const int32_t* off, Acc<MR>& acc) {
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
  for (int64_t t = 0; t < groups; ++t) {
    __m256i lo, hi;
    P::gather16(xq, off + P::kGroup * t, lo, hi);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m256i wv = broadcast4(w + 4 * (i * groups + t));
      acc[i][0] = _mm256_add_epi32(acc[i][0], P::madd(lo, wv));
      acc[i][1] = _mm256_add_epi32(acc[i][1], P::madd(hi, wv));
    }
  }
}

// Stores a channel-rows tile (channels o0.., positions from (oh, ow) on along the wp-long rows)
// into the [out_c, out_h, out_w] output, dropping positions past out_w and out_h: a vector whose
// lanes lie in one row as a (masked) store, one that runs on into the next row lane by lane.
template <int MR>
ZT_AVX2_INLINE void store_channel_rows(const Acc<MR>& acc, const Conv2dGeometry& g,
                                       const DirectPlan& p, int64_t o0, int64_t oh, int64_t ow,
                                       int32_t* y) {
  const int64_t plane = g.out_plane();
  int64_t row[2], col[2], valid[2];
  bool wraps[2];
  __m256i mask[2];
  for (int v = 0; v < 2; ++v) {
    int64_t r = oh, c = ow + 8 * v;
    for (; c >= p.wp; c -= p.wp) ++r;
    const int64_t n = r < g.out_h ? g.out_w - c : 0;
    row[v] = r, col[v] = c, wraps[v] = c + 8 > p.wp;
    valid[v] = n < 0 ? 0 : (n > 8 ? 8 : n);
    mask[v] = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(valid[v])),
                                 _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    int32_t* yo = y + (o0 + i) * plane;
    const __m256i in_order[2] = {_mm256_permute2x128_si256(acc[i][0], acc[i][1], 0x20),
                                 _mm256_permute2x128_si256(acc[i][0], acc[i][1], 0x31)};
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v) {
      int32_t* dst = yo + row[v] * g.out_w + col[v];
      if (!wraps[v]) {
        if (valid[v] == 8)
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), in_order[v]);
        else if (valid[v] > 0)
          _mm256_maskstore_epi32(dst, mask[v], in_order[v]);
        continue;
      }
      alignas(32) int32_t t[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(t), in_order[v]);
      int64_t r = row[v], c = col[v];
      for (int u = 0; u < 8; ++u, ++c) {
        for (; c >= p.wp; c -= p.wp) ++r;
        if (r < g.out_h && c < g.out_w) yo[r * g.out_w + c] = t[u];
      }
    }
  }
}

template <class P, int MR>
ZT_AVX2 void channel_tile(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* xq,
                          const char* w, const int32_t* off, int64_t o0, int64_t oh, int64_t ow,
                          int32_t* y) {
  Acc<MR> acc;
  channel_sums<P, MR>(p.groups, xq, w, off, acc);
  store_channel_rows<MR>(acc, g, p, o0, oh, ow, y);
}

// A last tile of its own height, rows < kMR.
template <class P, int MR>
ZT_AVX2 void last_channel_tile(int64_t rows, const Conv2dGeometry& g, const DirectPlan& p,
                               const int8_t* xq, const char* w, const int32_t* off, int64_t o0,
                               int64_t oh, int64_t ow, int32_t* y) {
  if (rows == MR) return channel_tile<P, MR>(g, p, xq, w, off, o0, oh, ow, y);
  if constexpr (MR > 1) last_channel_tile<P, MR - 1>(rows, g, p, xq, w, off, o0, oh, ow, y);
}

// Group t is taps group * t.. of a row; taps past the last are zero weights (at copies of the
// last tap's offset).
template <class P>
ZT_AVX2 void pack_channel_rows(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* w,
                               const Scratch& s) {
  const int64_t taps = g.patch_size(), slots = P::kGroup * p.groups;
  for (int64_t o = 0; o < g.out_c; ++o) {
    typename P::Elem* row = reinterpret_cast<typename P::Elem*>(s.weights) + o * slots;
    for (int64_t t = 0; t < slots; ++t) row[t] = t < taps ? w[o * taps + t] : 0;
  }
  int32_t* next = s.off;
  for (int64_t c = 0; c < g.in_c; ++c)
    for (int64_t ki = 0; ki < g.k; ++ki)
      for (int64_t kj = 0; kj < g.k; ++kj)
        *next++ = static_cast<int32_t>((c * p.hp + ki) * p.wp + kj);
  for (int64_t t = taps; t < slots; ++t, ++next) *next = next[-1];
}

template <class P>
ZT_AVX2 void channel_rows_image(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* x,
                                const Scratch& s, int32_t* y) {
  int8_t* xp = static_cast<int8_t*>(s.image);
  for (int64_t c = 0; c < g.in_c; ++c)
    for (int64_t ih = 0; ih < g.in_h; ++ih)
      __builtin_memcpy(xp + (c * p.hp + ih + g.pad) * p.wp + g.pad, x + (c * g.in_h + ih) * g.in_w,
                       static_cast<size_t>(g.in_w));
  int64_t oh = 0, ow = 0;  // of position q0
  for (int64_t q0 = 0; q0 < p.positions; q0 += kNR) {
    int64_t o0 = 0;
    const char* w = s.weights;
    for (; o0 + kMR <= g.out_c; o0 += kMR)
      channel_tile<P, kMR>(g, p, xp + q0, w + o0 * 4 * p.groups, s.off, o0, oh, ow, y);
    if (o0 < g.out_c)
      last_channel_tile<P, kMR - 1>(g.out_c - o0, g, p, xp + q0, w + o0 * 4 * p.groups, s.off, o0,
                                    oh, ow, y);
    for (ow += kNR; ow >= p.wp;) ow -= p.wp, ++oh;
  }
}

// ---- Pixel rows ----

// The sums of pixels pix[i] (an HWC image) over all groups of taps, for the kNR output channels
// of a packed panel [groups, kNR] of 4 bytes.
template <class P>
ZT_AVX2_INLINE void pixel_sums(int64_t groups, const typename P::Elem* const (&pix)[kMR],
                               const int32_t* off, const char* panel, Acc<kMR>& acc) {
#pragma GCC unroll 8
  for (int i = 0; i < kMR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
  for (int64_t t = 0; t < groups; ++t) {
    const __m256i* b = reinterpret_cast<const __m256i*>(panel + t * kNR * 4);
    const __m256i b0 = _mm256_loadu_si256(b), b1 = _mm256_loadu_si256(b + 1);
#pragma GCC unroll 8
    for (int i = 0; i < kMR; ++i) {
      const __m256i xv = broadcast4(pix[i] + off[t]);
      acc[i][0] = _mm256_add_epi32(acc[i][0], P::madd(xv, b0));
      acc[i][1] = _mm256_add_epi32(acc[i][1], P::madd(xv, b1));
    }
  }
}

// Group t = (ki, j) is entries group * j.. of kernel row ki's taps in HWC order (kj, then the
// channel); a panel row holds the group's weights of each of its kNR output channels in turn
// (zero for taps past the row's k * in_c and channels past out_c).
template <class P>
ZT_AVX2 void pack_pixel_rows(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* w,
                             const Scratch& s) {
  constexpr int kG = P::kGroup;
  const int64_t run = g.k * g.in_c;
  auto* packed = reinterpret_cast<typename P::Elem*>(s.weights);
  for (int64_t o = 0; o < p.panels * kNR; ++o) {
    typename P::Elem* lanes = packed + (o / kNR * p.groups * kNR + o % kNR) * kG;
    for (int64_t ki = 0; ki < g.k; ++ki)
      for (int64_t r = 0; r < p.row_groups * kG; ++r) {
        const int64_t t = ki * p.row_groups + r / kG, kj = r / g.in_c, c = r % g.in_c;
        lanes[t * kNR * kG + r % kG] =
            o < g.out_c && r < run ? w[((o * g.in_c + c) * g.k + ki) * g.k + kj] : 0;
      }
  }
  int32_t* next = s.off;
  for (int64_t ki = 0; ki < g.k; ++ki)
    for (int64_t j = 0; j < p.row_groups; ++j)
      *next++ = static_cast<int32_t>(ki * p.wp * g.in_c + j * kG);
}

template <class P>
ZT_AVX2 void pixel_rows_image(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* x,
                              const Scratch& s, int32_t* y) {
  auto* xh = static_cast<typename P::Elem*>(s.image);
  const int64_t plane = g.out_plane();
  for (int64_t c = 0; c < g.in_c; ++c)
    for (int64_t ih = 0; ih < g.in_h; ++ih)
      for (int64_t iw = 0; iw < g.in_w; ++iw)
        xh[((ih + g.pad) * p.wp + iw + g.pad) * g.in_c + c] = x[(c * g.in_h + ih) * g.in_w + iw];
  for (int64_t m0 = 0; m0 < plane; m0 += kMR) {
    // A last tile repeats its last pixel and drops the copies.
    const typename P::Elem* pix[kMR];
    for (int i = 0; i < kMR; ++i) {
      const int64_t m = m0 + i < plane ? m0 + i : plane - 1;
      pix[i] = xh + (m / g.out_w * g.stride * p.wp + m % g.out_w * g.stride) * g.in_c;
    }
    const int64_t pixels = plane - m0 < kMR ? plane - m0 : kMR;
    for (int64_t q = 0; q < p.panels; ++q) {
      Acc<kMR> acc;
      pixel_sums<P>(p.groups, pix, s.off, s.weights + q * p.groups * kNR * 4, acc);
      alignas(32) int32_t t[kMR][kNR];
      for (int i = 0; i < kMR; ++i)
        for (int v = 0; v < 2; ++v)
          _mm256_store_si256(reinterpret_cast<__m256i*>(t[i] + 8 * v), acc[i][v]);
      const int64_t channels = g.out_c - q * kNR < kNR ? g.out_c - q * kNR : kNR;
      for (int64_t j = 0; j < channels; ++j)
        for (int64_t i = 0; i < pixels; ++i) y[(q * kNR + j) * plane + m0 + i] = t[i][j];
    }
  }
}

template <class P>
ZT_AVX2 void direct(const Conv2dGeometry& g, int64_t images, const int8_t* x, const int8_t* w,
                    int32_t* y, void* work) {
  const DirectPlan p = direct_plan(g, P::kGroup);
  const Scratch s = scratch(p, work);
  __builtin_memset(s.image, 0, static_cast<size_t>(p.image));  // the padding stays zero
  if (p.channel_rows)
    pack_channel_rows<P>(g, p, w, s);
  else
    pack_pixel_rows<P>(g, p, w, s);
  for (int64_t n = 0; n < images; ++n) {
    const int8_t* xn = x + n * g.in_numel();
    int32_t* yn = y + n * g.out_numel();
    if (p.channel_rows)
      channel_rows_image<P>(g, p, xn, s, yn);
    else
      pixel_rows_image<P>(g, p, xn, s, yn);
  }
}

}  // namespace

// Unsigned where the input (all images) lies in [0, 127], as ReLU outputs do (a scan of O(input)
// against the convolution's O(input * k * k * out_c)), and its groups of 4 taps compute no more
// padding products than pairs do. Its vpmaddubsw + vpmaddwd take the multiplier twice per 32
// products, as often as vpmaddwd alone: on a CPU without VNNI the convolution, bound by the
// multiplier, gains only the fewer loads, shuffles and adds, which a padded tap outweighs
// (LeNet-5's 25 and 150 taps: slower in groups of 4).
ZT_AVX2 void conv2d_s8_direct(const Conv2dGeometry& g, int64_t images, const int8_t* x,
                              const int8_t* w, int32_t* y, void* work) {
  if (direct_plan(g, Unsigned::kGroup).products <= direct_plan(g, Widened::kGroup).products &&
      all_nonneg_s8(x, images * g.in_numel()))
    return direct<Unsigned>(g, images, x, w, y, work);
  direct<Widened>(g, images, x, w, y, work);
}

}  // namespace zotrain::kernels::avx2

#endif
