// The x86 int8 convolution (int8_x86_dot.h: compiled for AVX2 and for AVX-512 VNNI): register
// tiles of int32 sums of pairs of products, dot_pairs_s16 (vpmaddwd + vpaddd, or vpdpwssd; int8
// sign-extended to int16, so every product and pair sum is exact for all of -128..127),
// reading a padded copy of the image in place of a patch matrix. Integer sums are exact, so the
// results are bit for bit the portable kernel's whatever the order of the taps.
//
// Two layouts, as the f32 kernels (simd_kernels.h); the plan picks the one that wastes fewer
// multiply-adds on padding:
// - Channel rows (stride 1): a tile is 6 output channels x 16 positions of the output laid out
//   with the padded image's row length wp. Tap t of position q reads padded element off[t] + q,
//   so the operands are contiguous runs of the image, interleaved two taps at a time; the
//   wp - out_w positions past each output row are computed and dropped. A 1x1 kernel's pairs are
//   two channels at the same position: its copy of the image holds them interleaved (int16
//   pairs), so the tiles load them without unpacking. The VNNI build runs
//   kernels of 3 taps or wider in u8 x s8 quads, the image offset by 128 to make it unsigned and
//   128 times the weights' sum subtracted after, in tiles of 6 channels x 64 positions on
//   512-bit registers: 4 neighbouring taps of a kernel row (a window), and the 1 or 2 taps left
//   of each row as 4 kernel rows of one tap column (a column), each read as one vector from a
//   copy of the image expanded into every element's window (and column), made once per image
//   for all the tiles.
// - Pixel rows (any stride): a tile is 6 output pixels x 16 output channels. The image is
//   copied channels-last (HWC), so that a kernel row's taps of all channels, k * in_c elements,
//   are contiguous for every stride; a step reads the next 2 of them (int16) or 4 (int8 quads,
//   VNNI build: the image offset by 128 as for channel rows) as one 32-bit broadcast, a row
//   rounded up to whole steps with zero weights. The weights are packed in panels of 16
//   channels. In quads, a 2x2 max pooling of stride 2 may be fused: the tile's pixels are then
//   3 windows of 4, and only the windows' maxima are stored.
#include <algorithm>
#include <type_traits>
#include <utility>

#include "int8_x86_dot.h"
#include "kernels/int8.h"
#include "requant_avx512.h"
#include "zotrain/kernels/pool.h"

namespace zotrain::kernels::ZT_S8_NS {

namespace {

constexpr int kMR = 6;       // tile rows: 12 accumulators, 2 B vectors, a broadcast
constexpr int64_t kNR = 16;  // tile columns (two vectors of 8 int32)
// Pixel rows in quads, VNNI build: 12 pixels x 16 channels on 512 bits, one vector of 16 int32
// per pixel (vpdpbusd on 512 bits does twice the products of two on 256 bits, measured 1.95x the
// rate on the AVX-512 machine); the tile is stored as two of kMR pixels.
constexpr int kQuadMR = ZT_S8_VNNI ? 2 * kMR : kMR;
// Rows of A in a linear layer's tile (pixel rows in quads of 1x1 images): on AVX2 a quad step
// needs its products and the ones beside the accumulators, and 6 rows (12 accumulators) kept 10
// of them on the stack.
constexpr int kLinearMR = ZT_S8_VNNI ? kQuadMR : 4;
// Channel rows in quads (VNNI build only): 6 channels x 64 positions on 512 bits, 24
// accumulators: every broadcast weight serves 4 vectors.
constexpr int kQuadRowNV = 4;
constexpr int64_t kQuadRowNR = kQuadRowNV * kNR;

struct DirectPlan {
  bool channel_rows;
  int64_t hp, wp;
  int64_t pairs;      // channel rows: taps in pairs; pixel rows: steps (pairs or quads)
  int64_t positions;  // channel rows: output positions computed, a multiple of kNR
  int64_t row_steps;  // pixel rows: steps of a kernel row, ceil(k * in_c / lane)
  int64_t panels;     // pixel rows: panels of kNR output channels
  int64_t image;      // bytes of the padded image, a multiple of 4
  int64_t weights;    // int16 weights: channel rows [out_c, pairs, 2], pixel rows [panels,
                      // pairs, kNR, 2]; pixel quads: half the bytes of int8 [panels, pairs, kNR, 4]
  bool quads;         // u8 x s8 quads. Pixel rows: steps of 4 int8 elements. Channel rows: `pairs`
                      // counts windows (row_steps per kernel row) and columns, the image holds
                      // x + 128 and each channel's sum is less 128 times its weights'
  int64_t expanded;   // channel rows in quads: the elements each expanded copy of the image holds
  bool columns;       // channel rows in quads: with columns, so a second expanded copy
  bool interleaved;   // channel rows in pairs of a 1x1 kernel: the image as int16 pairs of
                      // channels 2t and 2t + 1, `positions` int32 pairs for each t
  // Channel rows in pairs of a wider kernel, where they fit kPairImagesBytes: after the padded
  // image (padded_bytes), a copy of it as int16 pairs (x[e], x[e + diffs[j]]) for each distinct
  // distance diffs[j] between a pair's two taps, pair_extent elements each, so a tile loads its
  // pairs as they are (ImagePairs) instead of widening and interleaving two runs every step.
  int64_t pair_images;
  int64_t pair_extent;
  int64_t padded_bytes;
  int32_t diffs[3];
  // Whether the tiles read int32 pairs (ImagePairs), with one offset per pair.
  bool reads_pairs() const { return interleaved || pair_images > 0; }
  // The int32 quads of the expanded copies.
  int64_t expanded_quads() const { return columns ? 2 * expanded : expanded; }
};

int64_t round_up(int64_t a, int64_t b) {
  return (a + b - 1) / b * b;
}

// Channel rows in quads: windows of 4 taps of a kernel row, as many as fill it (one more for 3
// taps left, with a zero weight); the 1 or 2 taps left of every kernel row (tail columns kj)
// go in columns of 4 kernel rows of a channel (zero weights past its k rows).
struct ChannelQuads {
  int64_t row_windows, windows, tail_columns, columns;
  int64_t steps() const { return windows + columns; }
};
ChannelQuads channel_quads(const Conv2dGeometry& g) {
  const int64_t rest = g.k % 4;
  const int64_t row_windows = g.k / 4 + (rest == 3 ? 1 : 0);
  const int64_t tail_columns = rest == 1 || rest == 2 ? rest : 0;
  return {row_windows, g.in_c * g.k * row_windows, tail_columns,
          g.in_c * tail_columns * ((g.k + 3) / 4)};
}

// Useful over computed multiply-adds of the two layouts in pairs (channel rows: wp positions per
// output row, channels in whole tiles, an even number of taps) and of pixel rows in steps of
// `lane` elements (whole panels of channels, kernel rows in whole steps), as fractions.
struct LayoutShares {
  int64_t channel_num, channel_den, pixel_num, pixel_den;
};
LayoutShares layout_shares(const Conv2dGeometry& g, int64_t lane) {
  const int64_t wp = g.in_w + 2 * g.pad, panels = (g.out_c + kNR - 1) / kNR;
  const int64_t row = g.k * g.in_c;
  return {g.out_w * g.out_c * g.patch_size(),
          wp * round_up(g.out_c, kMR) * 2 * ((g.patch_size() + 1) / 2), g.out_c * row,
          panels * kNR * round_up(row, lane)};
}

// Calls f(t, a, b) for tap pair t of channel rows in pairs, a and b the offsets of its two taps in
// the padded image (b = a for an odd last tap, whose weight is zero): the taps go kernel row by
// kernel row ki (channel c, then column kj within it), so that a tile may take the taps of some
// kernel rows only.
template <class F>
void for_each_tap_pair(const Conv2dGeometry& g, int64_t hp, int64_t wp, F&& f) {
  int64_t t = 0, first = -1;
  for (int64_t ki = 0; ki < g.k; ++ki)
    for (int64_t c = 0; c < g.in_c; ++c)
      for (int64_t kj = 0; kj < g.k; ++kj) {
        const int64_t off = (c * hp + ki) * wp + kj;
        if (first < 0) {
          first = off;
        } else {
          f(t++, first, off);
          first = -1;
        }
      }
  if (first >= 0) f(t, first, first);
}

// The pair images' budget: LeNet-5 conv1's two take 8 KB; more would leave the L1 cache.
constexpr int64_t kPairImagesBytes = 32 * 1024;

// The pair images of channel rows in pairs (DirectPlan::pair_images), if they fit
// kPairImagesBytes; p.image grows by their bytes. Worked out from the geometry (the plan is made
// on every call; a walk of the taps took 2-3 % of a step): in the taps' order (for_each_tap_pair)
// a pair lies within a kernel row (distance 1) for k >= 2, and crosses into the next row only
// where an odd tap index starts one, so for odd k alone: into the next channel's row (from the
// first channel on), or into the next kernel row's first channel (where in_c is odd). An odd
// last tap (zero weight for its pair's second) reads the first image.
void plan_pair_images(const Conv2dGeometry& g, DirectPlan& p) {
  const int64_t k = g.k, in_c = g.in_c, plane = p.hp * p.wp;
  int64_t images = 0;
  if (k >= 2) p.diffs[images++] = 1;
  if (k % 2 == 1 && in_c >= 2) p.diffs[images++] = static_cast<int32_t>(plane - (k - 1));
  if (k % 2 == 1 && k >= 3 && in_c % 2 == 1)
    p.diffs[images++] = static_cast<int32_t>(p.wp - (in_c - 1) * plane - (k - 1));
  // A tile reads its positions (below p.positions) plus a pair's first tap, at most the last
  // tap; made 16 at a time.
  const int64_t last_tap = ((in_c - 1) * p.hp + k - 1) * p.wp + k - 1;
  const int64_t extent = round_up(p.positions + last_tap, 16);
  if (images == 0 || 4 * images * extent > kPairImagesBytes) return;
  p.pair_images = images;
  p.pair_extent = extent;
  // Zeros after the padded image, so that the pairs are made 16 at a time up to the extent (but
  // for those before a negative distance's first).
  const int64_t most = *std::max_element(p.diffs, p.diffs + images);
  p.padded_bytes = round_up(std::max(p.padded_bytes, extent + std::max<int64_t>(most, 0)), 4);
  p.image = p.padded_bytes + 4 * images * extent;
}

// The plan of a geometry; with `quads`, in quads; with `pixel`, in pixel rows whatever the
// comparison of the two layouts in pairs says.
DirectPlan direct_plan(const Conv2dGeometry& g, bool quads = false, bool pixel = false) {
  DirectPlan p{};
  p.hp = g.in_h + 2 * g.pad;
  p.wp = g.in_w + 2 * g.pad;
  p.panels = (g.out_c + kNR - 1) / kNR;
  const int64_t row = g.k * g.in_c, channel_pairs = (g.patch_size() + 1) / 2;
  const LayoutShares s = layout_shares(g, 2);
  p.channel_rows =
      !pixel && g.stride == 1 && s.channel_num * s.pixel_den >= s.pixel_num * s.channel_den;
  if (p.channel_rows && quads) {
    p.quads = true;
    const ChannelQuads cq = channel_quads(g);
    p.row_steps = cq.row_windows;
    p.pairs = cq.steps();
    p.positions = round_up(g.out_h * p.wp, kQuadRowNR);
    // A tile reads its positions' quads at a window's or a column's first tap, which lies at
    // most at the last tap's offset; they are expanded 16 at a time, reading the image up to 4
    // (windows) or 3 wp (columns) elements past the last one.
    const int64_t last_tap = ((g.in_c - 1) * p.hp + g.k - 1) * p.wp + g.k - 1;
    p.expanded = round_up(p.positions + last_tap, 16);
    p.columns = cq.columns > 0;
    p.image = round_up(p.expanded + 3 * p.wp + 4, 4);
    p.weights = g.out_c * 2 * p.pairs;
  } else if (p.channel_rows) {
    p.pairs = channel_pairs;
    p.positions = round_up(g.out_h * p.wp, kNR);
    // The last tile reads 16 bytes from the last tap's offset past its first position.
    const int64_t last_tap = ((g.in_c - 1) * p.hp + g.k - 1) * p.wp + g.k - 1;
    p.interleaved = g.k == 1 && g.pad == 0;
    p.image = p.interleaved ? 4 * p.pairs * p.positions : round_up(p.positions + last_tap, 4);
    p.padded_bytes = p.image;
    if (!p.interleaved) plan_pair_images(g, p);
    p.weights = g.out_c * 2 * p.pairs;
  } else {
    p.quads = quads;
    const int64_t lane = quads ? 4 : 2, bytes = quads ? 1 : 2;
    p.row_steps = (row + lane - 1) / lane;
    p.pairs = g.k * p.row_steps;
    // The last step of the last pixel's kernel row reads up to lane - 1 elements past the image,
    // and the copy of the last pixel writes up to 8 bytes from its first.
    p.image = round_up((p.hp * p.wp * g.in_c + lane) * bytes + 8, 4);
    p.weights = p.panels * p.pairs * kNR * 2;
  }
  return p;
}

// Whether plan p may run in quads: in the VNNI build, where vpdpbusd makes four products one
// instruction (the AVX2 build's three-instruction u8 x s8 step measured slower, and saturates
// on the offset image); channel rows where their windows take fewer steps than pairs of taps
// (kernels 3 wide or more), pixel rows always.
bool has_quads(const Conv2dGeometry& g, const DirectPlan& p) {
  return ZT_S8_VNNI && (!p.channel_rows || channel_quads(g).steps() < p.pairs);
}

// Whether channel rows without quads (p: kernels narrower than 3, the 1x1 convolutions) should
// give way to pixel rows in quads, in the VNNI build: a quad instruction there does 64 products
// on 512 bits against 16 pairs' on 256, so it pays unless pixel rows waste four times the share
// of multiply-adds (channel panels of 16).
bool pixel_quads_pay(const Conv2dGeometry& g, const DirectPlan& p) {
  if (!ZT_S8_VNNI || !p.channel_rows || has_quads(g, p)) return false;
  const LayoutShares s = layout_shares(g, 4);
  return 4 * s.pixel_num * s.channel_den > s.channel_num * s.pixel_den;
}

// The plan the kernel runs: in quads where the layout has them or pixel rows in quads pay.
DirectPlan run_plan(const Conv2dGeometry& g) {
  const DirectPlan p = direct_plan(g);
  if (has_quads(g, p)) return direct_plan(g, true);
  if (pixel_quads_pay(g, p)) return direct_plan(g, true, true);
  return p;
}

}  // namespace

// The scratch's first 8 bytes hold the key of the weights packed in it (the plan is the
// geometry's); read and written by memcpy: a caller's scratch may be only 4-byte aligned.
constexpr int64_t kKeyBytes = sizeof(uint64_t);

// Scratch layout: the weights' key, the padded image, the expanded copies of channel rows in
// quads (windows, then columns: int32 quads), the int16 weights, the int32 step offsets (channel
// rows in pairs: one per tap of each pair), the int32 compensations of quads (one per output
// channel of whole panels).
int64_t conv2d_s8_direct_work_bytes(const Conv2dGeometry& g) {
  auto bytes = [&g](const DirectPlan& p) {
    return p.image + 4 * p.expanded_quads() + 2 * p.weights + 4 * 2 * p.pairs +
           4 * round_up(g.out_c, kNR);
  };
  const int64_t pairs = bytes(direct_plan(g)), run = bytes(run_plan(g));
  return kKeyBytes + (run > pairs ? run : pairs);
}

namespace {

// The scratch of conv2d_s8_direct_work_bytes.
struct Scratch {
  void* image;        // the padded image: int8 (channel rows) or int16 (pixel rows)
  int32_t* expanded;  // channel rows in quads: the image's windows, then its columns
  int16_t* weights;   // the packed weights
  int32_t* off;       // the step offsets
  int32_t* comp;      // channel rows in quads: 128 times each output channel's sum of weights
};

Scratch scratch(const DirectPlan& p, void* work) {
  Scratch s;
  s.image = static_cast<char*>(work) + kKeyBytes;
  s.expanded = reinterpret_cast<int32_t*>(static_cast<char*>(s.image) + p.image);
  s.weights = reinterpret_cast<int16_t*>(s.expanded + p.expanded_quads());
  s.off = reinterpret_cast<int32_t*>(s.weights + p.weights);
  s.comp = s.off + 2 * p.pairs;
  return s;
}

template <int MR>
using Acc = __m256i[MR][2];

// 128 times the sum of a channel's weights: what the image offset by 128 adds to its sums.
int32_t offset_compensation(const int8_t* w, int64_t taps) {
  int32_t sum = 0;
  for (int64_t t = 0; t < taps; ++t) sum += w[t];
  return 128 * sum;
}

// ---- Channel rows ----

// One step of a channel-rows tile: acc[i][v] += the products of the int16 pairs x[v] with
// output channel i's pair of int16 weights at w + 2 i stride.
template <int MR>
ZT_S8_INLINE void add_step(Acc<MR>& acc, __m256i x0, __m256i x1, const int16_t* w, int64_t stride) {
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    int32_t two;
    __builtin_memcpy(&two, w + 2 * i * stride, sizeof two);
    const __m256i wv = _mm256_set1_epi32(two);
    acc[i][0] = dot_pairs_s16(acc[i][0], x0, wv);
    acc[i][1] = dot_pairs_s16(acc[i][1], x1, wv);
  }
}

// The int16 pairs of tap pair t at a channel-rows tile's 16 positions, read from the padded
// image at the tile's first position (xq): its two taps' runs interleaved by vpunpck, in its
// lane order (x0: positions 0-3, 8-11; x1: 4-7, 12-15).
struct UnpackedPairs {
  static constexpr bool kUnpackOrder = true;
  const int8_t* xq;
  const int32_t* off;
  ZT_S8_INLINE void operator()(int64_t t, __m256i& x0, __m256i& x1) const {
    const __m256i a =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xq + off[2 * t])));
    const __m256i b = _mm256_cvtepi8_epi16(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(xq + off[2 * t + 1])));
    x0 = _mm256_unpacklo_epi16(a, b);
    x1 = _mm256_unpackhi_epi16(a, b);
  }
};
// The same from int32 pairs (DirectPlan::reads_pairs: a 1x1 kernel's interleaved image or the
// pair images) at the tile's first position, pair t's at off[t]: x0 its 8 positions from there, x1
// the 8 from `second` on (8: a tile's 16 positions in order; wp: a pooled tile's two output rows).
struct ImagePairs {
  static constexpr bool kUnpackOrder = false;
  const int32_t* xq;
  const int32_t* off;
  int64_t second;
  ZT_S8_INLINE void operator()(int64_t t, __m256i& x0, __m256i& x1) const {
    const int32_t* v = xq + off[t];
    x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v));
    x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + second));
  }
};

// out[i] = the sums of output channel i (weights w + i * 2 pairs) over tap pairs first .. last - 1,
// for a tile's positions 0-15 (out[i][0]: 0-7, out[i][1]: 8-15), their pairs from `pairs_at`.
// Out of line, with accumulators of its own: inlined into the tiles, GCC kept one of the 12 on
// the stack, an add through memory every step. The loader by reference: a 24-byte one by value
// went through the stack as scalar stores read back by one vector load, which stalls forwarding.
template <int MR, class Pairs>
__attribute__((noinline)) ZT_S8 void channel_sums(int64_t first, int64_t last, int64_t pairs,
                                                  const Pairs& pairs_at, const int16_t* w,
                                                  Acc<MR>& out) {
  Acc<MR> acc;
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
  for (int64_t t = first; t < last; ++t) {
    __m256i x0, x1;
    pairs_at(t, x0, x1);
    add_step<MR>(acc, x0, x1, w + 2 * t, pairs);
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    const __m256i lo = acc[i][0], hi = acc[i][1];
    if constexpr (Pairs::kUnpackOrder) {  // to the positions' order
      out[i][0] = _mm256_permute2x128_si256(lo, hi, 0x20);
      out[i][1] = _mm256_permute2x128_si256(lo, hi, 0x31);
    } else {
      out[i][0] = lo, out[i][1] = hi;
    }
  }
}

// The first n lanes of v at dst, 0 < n <= the lanes (256 bits: store_first_s32).
ZT_S8_INLINE void store_lanes(int32_t* dst, int64_t n, __m256i v) {
  if (n == 8)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), v);
  else
    store_first_s32(dst, n, v);
}
// v's lanes from u on as its first ones (the rest undefined).
ZT_S8_INLINE __m256i lanes_from(__m256i v, int u) {
  return _mm256_permutevar8x32_epi32(
      v, _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(u)));
}
#if ZT_S8_VNNI
ZT_S8_INLINE void store_lanes(int32_t* dst, int64_t n, __m512i v) {
  _mm512_mask_storeu_epi32(dst, static_cast<__mmask16>((1u << n) - 1), v);
}
ZT_S8_INLINE __m512i lanes_from(__m512i v, int u) {
  // The zero-masking form: GCC 12's unmasked one warns of its undefined source (bug 105593).
  return _mm512_maskz_permutexvar_epi32(
      0xFFFF,
      _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                       _mm512_set1_epi32(u)),
      v);
}
#endif

// A run of a channel-rows vector's lanes that lie in one output row: lanes u .. u + n - 1 go to
// output element `at` of the channel's plane.
struct LaneRun {
  int u, n;
  int64_t at;
};

// The runs of the kLanes positions from (oh, ow) on along the wp-long rows (ow may be wp or more),
// dropping those past out_w and out_h; returns their count.
template <int kLanes>
ZT_S8_INLINE int lane_runs(const Conv2dGeometry& g, const DirectPlan& p, int64_t oh, int64_t ow,
                           LaneRun (&runs)[kLanes]) {
  if (p.wp == g.out_w) {
    // A 1x1 kernel: the positions are the output's, rows running on into each other, so the
    // lanes are one run (a 7x7 plane would take one a row).
    const int64_t at = oh * g.out_w + ow, n = std::min<int64_t>(kLanes, g.out_plane() - at);
    if (n <= 0) return 0;
    runs[0] = {0, static_cast<int>(n), at};
    return 1;
  }
  for (; ow >= p.wp; ow -= p.wp) ++oh;
  int count = 0;
  for (int64_t u = 0; u < kLanes; ow = 0, ++oh) {
    const int64_t len = std::min<int64_t>(kLanes - u, p.wp - ow);
    const int64_t n = oh < g.out_h ? std::min(len, g.out_w - ow) : 0;
    if (n > 0) runs[count++] = {static_cast<int>(u), static_cast<int>(n), oh * g.out_w + ow};
    u += len;
  }
  return count;
}

// Stores a channel-rows tile (channels o0.., positions from (oh, ow) on along the wp-long rows;
// NV vectors VT of int32 per channel) into the [out_c, out_h, out_w] output, dropping positions
// past out_w and out_h: each run of a vector's lanes that lie in one row (lane_runs) as a (masked)
// store. (Lane by lane, a vector that ran on into the next row took a fifth of MobileNetV2:0.35's
// AVX2 NPU-ZO step: every vector of its 7x7 and 4x4 planes does.)
template <int MR, int NV, class VT>
ZT_S8_INLINE void store_channel_rows(const VT (&acc)[MR][NV], const Conv2dGeometry& g,
                                     const DirectPlan& p, int64_t o0, int64_t oh, int64_t ow,
                                     int32_t* y) {
  constexpr int kLanes = sizeof(VT) / sizeof(int32_t);
  const int64_t plane = g.out_plane();
  // Most tiles lie in one row below out_w (for a 1x1 kernel, within the plane): whole vectors,
  // without working out the runs (their loops and branches took a sixth of LeNet-5 conv1's AVX2
  // time).
  const int64_t at = oh * g.out_w + ow;
  if (oh < g.out_h && (p.wp == g.out_w ? at + NV * kLanes <= plane : ow + NV * kLanes <= g.out_w)) {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        store_lanes(y + (o0 + i) * plane + at + kLanes * v, kLanes, acc[i][v]);
    return;
  }
  LaneRun runs[NV][kLanes];
  int count[NV];
  for (int v = 0; v < NV; ++v) count[v] = lane_runs(g, p, oh, ow + kLanes * v, runs[v]);
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    int32_t* yo = y + (o0 + i) * plane;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      for (int k = 0; k < count[v]; ++k) {
        const LaneRun& run = runs[v][k];
        store_lanes(yo + run.at, run.n, run.u ? lanes_from(acc[i][v], run.u) : acc[i][v]);
      }
  }
}

#if ZT_S8_VNNI
// 128-bit lane k of a vector of 16 positions holds positions 4k .. 4k + 3: dwords k and k + 1 of
// the 20 bytes loaded at x, the first position's (vpermd), then bytes j .. j + 3 of them for
// position 4k + j (vpshufb). The zero-masking forms: GCC 12's unmasked ones warn of their
// undefined sources.
ZT_S8_INLINE __m512i windows_u8(const int8_t* x) {
  const __m512i lanes = _mm512_setr_epi32(0, 1, 1, 2, 1, 2, 2, 3, 2, 3, 3, 4, 3, 4, 4, 5);
  // Bytes 0-3, 1-4, 2-5, 3-6 of each lane.
  const __m512i slide = _mm512_setr4_epi32(0x03020100, 0x04030201, 0x05040302, 0x06050403);
  const __m512i bytes = _mm512_maskz_loadu_epi32(0x1f, x);
  return _mm512_shuffle_epi8(_mm512_maskz_permutexvar_epi32(0xffff, lanes, bytes), slide);
}

// The image offset by 128 (x) expanded into quads for p.expanded elements e: windows[e] = its
// bytes e .. e + 3, and with p.columns, columns[e] (at windows + p.expanded) = bytes e, e + wp,
// e + 2 wp, e + 3 wp.
ZT_S8_INLINE void expand_quads(const DirectPlan& p, const int8_t* x, int32_t* windows) {
  const int64_t n = p.expanded, wp = p.wp;
  for (int64_t e = 0; e < n; e += 16) _mm512_storeu_si512(windows + e, windows_u8(x + e));
  if (!p.columns) return;
  int32_t* col = windows + n;
  for (int64_t e = 0; e < n; e += 16) {
    __m128i r[4];
#pragma GCC unroll 4
    for (int d = 0; d < 4; ++d)
      r[d] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + e + d * wp));
    // Rows 0 and 1, then 2 and 3, byte by byte; then the two pairs' int16 interleaved.
    const __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]), a1 = _mm_unpackhi_epi8(r[0], r[1]);
    const __m128i b0 = _mm_unpacklo_epi8(r[2], r[3]), b1 = _mm_unpackhi_epi8(r[2], r[3]);
    __m128i* dst = reinterpret_cast<__m128i*>(col + e);
    _mm_storeu_si128(dst, _mm_unpacklo_epi16(a0, b0));
    _mm_storeu_si128(dst + 1, _mm_unpackhi_epi16(a0, b0));
    _mm_storeu_si128(dst + 2, _mm_unpacklo_epi16(a1, b1));
    _mm_storeu_si128(dst + 3, _mm_unpackhi_epi16(a1, b1));
  }
}

// The sums of a channel-rows tile in quads for kQuadRowNR positions (out[i][v] positions 16 v ..
// 16 v + 15): every step one vector of each 16 positions' quads at xq + off[t] (the
// expanded image at the tile's first position), 4 bytes of weights (channel i's at w + i * 2
// steps); starting at -comp[i] (128 times channel i's sum of weights), the same int32 as
// subtracting it after.
template <int MR>
ZT_S8_INLINE void channel_quad_sums_512(int64_t steps, const int32_t* xq, const int16_t* w,
                                        const int32_t* off, const int32_t* comp,
                                        __m512i (&out)[MR][kQuadRowNV]) {
  constexpr int NV = kQuadRowNV;
  __m512i acc[NV * MR];
#pragma GCC unroll 32
  for (int i = 0; i < NV * MR; ++i)
    acc[i] = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_set1_epi32(comp[i / NV]));
  for (int64_t t = 0; t < steps; ++t) {
    __m512i x[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) x[v] = _mm512_loadu_si512(xq + off[t] + 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      int32_t four;
      __builtin_memcpy(&four, w + 2 * (i * steps + t), sizeof four);
      const __m512i wv = _mm512_set1_epi32(four);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[NV * i + v] = dot_quads_u8s8(acc[NV * i + v], x[v], wv);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) out[i][v] = acc[NV * i + v];
}
// channel_quad_sums_512 through memory, for the pooled tiles: inlined into them, GCC spilled and
// moved the accumulators in the loop over the steps (measured 7-12 % slower LeNet-5 int8 steps).
template <int MR>
__attribute__((noinline)) ZT_S8 void channel_quad_sums_to(int64_t steps, const int32_t* xq,
                                                          const int16_t* w, const int32_t* off,
                                                          const int32_t* comp,
                                                          __m512i (&out)[MR][kQuadRowNV]) {
  channel_quad_sums_512<MR>(steps, xq, w, off, comp, out);
}

#endif

// The tap pairs first .. last - 1 a channel-rows tile in pairs runs for output rows top ..
// bottom. Kernel rows lo .. hi - 1 read an image row for one of those rows at least: the others
// read padding alone, so their taps are skipped (a data gradient by convolution, padded by k - 1
// on each side, skips a quarter of LeNet-5 conv2's). A pair across the range's ends keeps its
// skipped tap, which adds zeros.
struct TapPairs {
  int64_t first, last;
};
TapPairs tap_pairs(const Conv2dGeometry& g, int64_t top, int64_t bottom) {
  const int64_t row = g.in_c * g.k;
  const int64_t lo = g.pad > bottom ? g.pad - bottom : 0;
  const int64_t hi = std::max(lo, std::min(g.k, g.pad + g.in_h - top));
  return {lo * row / 2, (hi * row + 1) / 2};
}

// A tile of kNR positions in pairs, or of kQuadRowNR in quads (VNNI build); xq is the padded
// image at the tile's first position, or its int32 pairs (pairs_image_at) or in quads the expanded
// image (int32) at it.
template <int MR>
ZT_S8 void channel_tile(const Conv2dGeometry& g, const DirectPlan& p, const void* xq,
                        const int16_t* w, const int32_t* off, [[maybe_unused]] const int32_t* comp,
                        int64_t o0, int64_t oh, int64_t ow, int32_t* y) {
#if ZT_S8_VNNI
  if (p.quads) {
    __m512i acc[MR][kQuadRowNV];
    channel_quad_sums_512<MR>(p.pairs, static_cast<const int32_t*>(xq), w, off, comp, acc);
    return store_channel_rows<MR>(acc, g, p, o0, oh, ow, y);
  }
#endif
  const TapPairs t = tap_pairs(g, oh, ow + kNR <= p.wp ? oh : oh + (ow + kNR - 1) / p.wp);
  Acc<MR> acc;
  if (p.reads_pairs())
    channel_sums<MR>(t.first, t.last, p.pairs, ImagePairs{static_cast<const int32_t*>(xq), off, 8},
                     w, acc);
  else
    channel_sums<MR>(t.first, t.last, p.pairs, UnpackedPairs{static_cast<const int8_t*>(xq), off},
                     w, acc);
  store_channel_rows<MR>(acc, g, p, o0, oh, ow, y);
}

// tile.template operator()<R>() for R = rows, 1 <= rows <= MR: a last tile of its own height.
template <int MR, class Tile>
ZT_S8_INLINE void with_rows(int64_t rows, Tile&& tile) {
  if (rows == MR) return tile.template operator()<MR>();
  if constexpr (MR > 1) with_rows<MR - 1>(rows, tile);
}

// The extremes of int32 sums lane by lane, in vectors V (both start at zero: lanes masked out as
// zeros change neither): range_bits of every value taken in, as lo's lanes are at most 0 and
// hi's at least 0, so the largest magnitude among them is the values'.
template <class V>
struct LaneExtremes {
  static constexpr int kLanes = sizeof(V) / sizeof(int32_t);
  V lo, hi;
  ZT_S8_INLINE LaneExtremes() : lo(V{}), hi(V{}) {}
  ZT_S8_INLINE int bits() const {
    alignas(64) int32_t lanes[2 * kLanes];
    __builtin_memcpy(lanes, &lo, sizeof lo);
    __builtin_memcpy(lanes + kLanes, &hi, sizeof hi);
    return range_bits(lanes, 2 * kLanes);
  }
};

#if ZT_S8_VNNI
// Int32 lanes in GCC's vector extension: its min and max compile to vpminsd and vpmaxsd, without
// the undefined operand GCC 12's AVX-512 intrinsics pass, which -Wmaybe-uninitialized reports
// (GCC bug 105593).
typedef int32_t Lanes __attribute__((vector_size(kNR * sizeof(int32_t))));
using Extremes = LaneExtremes<Lanes>;
ZT_S8_INLINE Lanes lanes_min(Lanes a, Lanes b) {
  return a < b ? a : b;
}
ZT_S8_INLINE Lanes lanes_max(Lanes a, Lanes b) {
  return a > b ? a : b;
}

// The NPU's requantization in the tiles' epilogue (conv2d_s8_direct_requantized, linear_s8 with
// a Requantization): y = clamp(requantize(bias[o] + sum, mult), lo, hi) as int8.
struct TileRequant {
  avx512::Requant16 rq;
  const int32_t* bias;  // or null
  __m512i lo, hi;       // as bytes
  Lanes lo32, hi32;
  ZT_S8_INLINE explicit TileRequant(const Requantization& r)
      : rq(r.mult),
        bias(r.bias),
        lo(_mm512_set1_epi8(static_cast<char>(r.lo))),
        hi(_mm512_set1_epi8(static_cast<char>(r.hi))),
        lo32(Lanes{} + r.lo),
        hi32(Lanes{} + r.hi) {}
  // 16 sums plus their bias (b), requantized and clamped, as int32.
  template <bool kWide>
  ZT_S8_INLINE Lanes clamped(__m512i sums, __m512i b) const {
    return lanes_min(lanes_max((Lanes)rq.lanes<kWide>(_mm512_add_epi32(sums, b)), lo32), hi32);
  }
};

// Where channel_tile_max_pooled's pooled rows go (tile row i, pooled row ph): int32 maxima into
// the pooled planes [channels, pool plane] at y (the tile's first channel's);
struct PooledRowSums {
  int32_t* y;
  int64_t plane, w;
  __mmask16 stored;
  ZT_S8_INLINE void operator()(int i, int64_t ph, __m512i v) const {
    _mm512_mask_storeu_epi32(y + i * plane + ph * w, stored, v);
  }
};
// or requantized, with channel i's bias (at bias + i, the tile's; or none), as int8.
template <bool kWide>
struct PooledRowRequant {
  const TileRequant* r;
  const int32_t* bias;
  int8_t* y;
  int64_t plane, w;
  __mmask16 stored;
  ZT_S8_INLINE void operator()(int i, int64_t ph, __m512i v) const {
    const __m512i b = bias ? _mm512_set1_epi32(bias[i]) : _mm512_setzero_si512();
    _mm_mask_storeu_epi8(y + i * plane + ph * w, stored,
                         _mm512_maskz_cvtepi32_epi8(0xFFFF, (__m512i)r->clamped<kWide>(v, b)));
  }
};

// Channel rows in quads with the 2x2 max pooling of stride 2 fused, where a tile's positions are
// two output rows (wp = 32): the maxima of the tile's columns of two, then of neighbouring
// columns, are pooled row ph of each channel's pooled plane, which goes to out (PooledRowSums,
// PooledRowRequant); with kRanges, the extremes taken into e. The positions past out_w in each row
// (computed and dropped) are left out of the extremes and of the windows.
template <int MR, bool kRanges, class Out>
ZT_S8 void channel_tile_max_pooled(const Conv2dGeometry& g, const DirectPlan& p,
                                   const Pool2dGeometry& pool, const int32_t* xq, const int16_t* w,
                                   const int32_t* off, const int32_t* comp, int64_t ph, Extremes& e,
                                   const Out& out) {
  static_assert(kQuadRowNV == 4, "a tile is two rows of two vectors");
  __m512i acc[MR][kQuadRowNV];
  channel_quad_sums_to<MR>(p.pairs, xq, w, off, comp, acc);
  Lanes column = {};
  for (int i = 0; i < kNR; ++i) column[i] = i;
  // Lanes 2i and 2i + 1 of the 32 columns (most0 then most1) side by side.
  const __m512i evens = (__m512i)(column * 2), odds = (__m512i)(column * 2 + 1);
  const auto out_w = static_cast<int32_t>(g.out_w), pooled_w = static_cast<int32_t>(pool.out_w);
  const Lanes valid0 = column < out_w, valid1 = column + static_cast<int32_t>(kNR) < out_w;
  const Lanes kept = column < pooled_w;
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    const Lanes top0 = (Lanes)acc[i][0], top1 = (Lanes)acc[i][1];
    const Lanes bottom0 = (Lanes)acc[i][2], bottom1 = (Lanes)acc[i][3];
    const Lanes most0 = lanes_max(top0, bottom0), most1 = lanes_max(top1, bottom1);
    if constexpr (kRanges) {
      e.lo = valid0 ? lanes_min(e.lo, lanes_min(top0, bottom0)) : e.lo;
      e.lo = valid1 ? lanes_min(e.lo, lanes_min(top1, bottom1)) : e.lo;
    }
    const Lanes pooled =
        lanes_max((Lanes)_mm512_permutex2var_epi32((__m512i)most0, evens, (__m512i)most1),
                  (Lanes)_mm512_permutex2var_epi32((__m512i)most0, odds, (__m512i)most1));
    if constexpr (kRanges) e.hi = kept ? lanes_max(e.hi, pooled) : e.hi;
    out(i, ph, (__m512i)pooled);
  }
}
#endif

// ---- Channel rows in pairs with the 2x2 max pooling fused ----

// __m256i without its may_alias attribute, which a template argument drops (with a warning).
typedef long long Bits256 __attribute__((vector_size(32)));
using PairExtremes = LaneExtremes<Bits256>;

// The 8 bytes at a and at b as 8 pairs of int16 (a[j], b[j]).
ZT_S8_INLINE __m256i interleaved_s16(const int8_t* a, const int8_t* b) {
  return _mm256_cvtepi8_epi16(
      _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a)),
                        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b))));
}

// The int16 pairs of tap pair t at a pooled tile's positions, 8 columns of two neighbouring output
// rows, read from the padded image at the tile's first position (xq): 8 bytes at each of the
// pair's two taps for each row, interleaved and widened (x0: the top row, x1: the bottom one).
struct RowPairs {
  static constexpr bool kUnpackOrder = false;
  const int8_t* xq;
  const int32_t* off;
  int64_t wp;
  ZT_S8_INLINE void operator()(int64_t t, __m256i& x0, __m256i& x1) const {
    const int8_t *a = xq + off[2 * t], *b = xq + off[2 * t + 1];
    x0 = interleaved_s16(a, b);
    x1 = interleaved_s16(a + wp, b + wp);
  }
};

// A pooled tile in pairs: output rows oh = 2 ph and oh + 1, columns ow .. ow + 7 (those below
// out_w valid); the 2x2 maxima of its valid columns go to pooled row ph, columns ow / 2.., of
// each channel's pooled plane at y (channel o0's) and its valid sums into the extremes e. xq is
// the padded image, or its int32 pairs (pairs_image_at), at (oh, ow). Kernel rows that read padding
// alone for both output rows are skipped (tap_pairs).
template <int MR>
ZT_S8 void channel_pair_tile_max_pooled(const Conv2dGeometry& g, const DirectPlan& p,
                                        const Pool2dGeometry& pool, const void* xq,
                                        const int16_t* w, const int32_t* off, int64_t ph,
                                        int64_t ow, PairExtremes& e, int32_t* y) {
  const TapPairs t = tap_pairs(g, 2 * ph, 2 * ph + 1);
  Acc<MR> acc;
  if (p.reads_pairs())
    channel_sums<MR>(t.first, t.last, p.pairs,
                     ImagePairs{static_cast<const int32_t*>(xq), off, p.wp}, w, acc);
  else
    channel_sums<MR>(t.first, t.last, p.pairs, RowPairs{static_cast<const int8_t*>(xq), off, p.wp},
                     w, acc);
  const int64_t valid = std::min<int64_t>(8, g.out_w - ow);  // even, as out_w and ow
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i kept = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(valid)), lanes);
  // The windows' maxima in lanes 0, 2, 4 and 6, gathered into the low 4.
  const __m256i evens = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  const int64_t plane = pool.out_plane();
  int32_t* yo = y + ph * pool.out_w + ow / 2;
  // The tile's extremes, its columns past out_w dropped once for all its channels: the windows'
  // maxima are among the larger of each column's two rows (most), whose extremes are the same.
  __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    const __m256i top = acc[i][0], bottom = acc[i][1];
    const __m256i most = _mm256_max_epi32(top, bottom);
    lo = _mm256_min_epi32(lo, _mm256_min_epi32(top, bottom));
    hi = _mm256_max_epi32(hi, most);
    const __m256i pooled = _mm256_max_epi32(most, _mm256_shuffle_epi32(most, 0xB1));
    const __m128i four = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(pooled, evens));
    if (valid == 8)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(yo + i * plane), four);
    else
      store_first_s32(yo + i * plane, valid / 2, _mm256_castsi128_si256(four));
  }
  e.lo = _mm256_min_epi32(e.lo, _mm256_and_si256(lo, kept));
  e.hi = _mm256_max_epi32(e.hi, _mm256_and_si256(hi, kept));
}

// In pairs, the taps go kernel row by kernel row ki (channel c, then column kj within it), so that
// a tile may take the taps of some kernel rows only; tap pair t is taps 2t and 2t + 1, an odd
// last tap paired with a zero weight (and a copy of its own offset). In quads, window (c, ki, j)
// is taps kj = 4j .. 4j + 3 of kernel row (c, ki), and column (c, kj, h) taps ki = 4h .. 4h + 3
// of tail column kj of channel c; zero weights past k.
ZT_S8 void pack_channel_rows(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* w,
                             const Scratch& s) {
  const int64_t taps = g.patch_size();
  if (p.quads) {
    // Windows, then the columns of the tail taps kj >= 4 row_steps; the offsets are of the
    // expanded image's elements (the columns' copy following the windows').
    const ChannelQuads cq = channel_quads(g);
    const int64_t rows = g.in_c * g.k, tail_from = 4 * cq.row_windows;
    const int64_t heights = cq.tail_columns ? (g.k + 3) / 4 : 0;
    int8_t* packed = reinterpret_cast<int8_t*>(s.weights);
    for (int64_t o = 0; o < g.out_c; ++o) {
      const int8_t* wo = w + o * taps;
      s.comp[o] = offset_compensation(wo, taps);
      int8_t* next = packed + o * p.pairs * 4;
      for (int64_t r = 0; r < rows; ++r)  // kernel row r = (c, ki)
        for (int64_t e = 0; e < tail_from; ++e) *next++ = e < g.k ? wo[r * g.k + e] : 0;
      for (int64_t c = 0; c < g.in_c; ++c)
        for (int64_t kj = tail_from; kj < g.k; ++kj)
          for (int64_t ki = 0; ki < 4 * heights; ++ki)
            *next++ = ki < g.k ? wo[(c * g.k + ki) * g.k + kj] : 0;
    }
    int32_t* next = s.off;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cq.row_windows; ++j)
        *next++ = static_cast<int32_t>(((r / g.k) * p.hp + r % g.k) * p.wp + 4 * j);
    for (int64_t c = 0; c < g.in_c; ++c)
      for (int64_t kj = tail_from; kj < g.k; ++kj)
        for (int64_t h = 0; h < heights; ++h)
          *next++ = static_cast<int32_t>(p.expanded + (c * p.hp + 4 * h) * p.wp + kj);
    return;
  }
  // Locals: the int16 stores might otherwise reload g's fields every element (in ZO every pass
  // packs new weights).
  const int64_t k = g.k, in_c = g.in_c;
  for (int64_t o = 0; o < g.out_c; ++o) {
    int16_t* next = s.weights + o * 2 * p.pairs;
    const int8_t* wo = w + o * taps;
    if (k == 1) {  // the taps are the channels, in order: one widening copy
      for (int64_t c = 0; c < in_c; ++c) next[c] = wo[c];
      next += in_c;
    } else {
      for (int64_t ki = 0; ki < k; ++ki)
        for (int64_t c = 0; c < in_c; ++c)
          for (int64_t kj = 0; kj < k; ++kj) *next++ = wo[(c * k + ki) * k + kj];
    }
    if (taps % 2) *next = 0;
  }
  for_each_tap_pair(g, p.hp, p.wp, [&](int64_t t, int64_t a, int64_t b) {
    if (p.interleaved) {  // one offset a pair, into the interleaved image
      s.off[t] = static_cast<int32_t>(t * p.positions);
    } else if (p.pair_images) {  // one offset a pair, into the image of its distance
      const int64_t j = b == a ? 0 : std::find(p.diffs, p.diffs + p.pair_images, b - a) - p.diffs;
      s.off[t] = static_cast<int32_t>(j * p.pair_extent + a);
    } else {
      s.off[2 * t] = static_cast<int32_t>(a);
      s.off[2 * t + 1] = static_cast<int32_t>(b);
    }
  });
}

// The 16 bytes at src + 128 (the sign bit flipped), stored at dst.
ZT_S8_INLINE void offset_128x16(int8_t* dst, const int8_t* src) {
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm_xor_si128(x, _mm_set1_epi8(-128)));
}

// dst[i] = src[i] + 128 for i < n: 16 bytes at a time, the last 16 overlapping the ones before,
// so a row of 16 bytes or more has no scalar tail (LeNet-5's 28).
ZT_S8_INLINE void copy_offset_128(int8_t* dst, const int8_t* src, int64_t n) {
  if (n < 16) {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int8_t>(src[i] ^ 0x80);
    return;
  }
  for (int64_t i = 0; i + 16 <= n; i += 16) offset_128x16(dst + i, src + i);
  if (n % 16) offset_128x16(dst + n - 16, src + n - 16);
}

// A 1x1 kernel's image x as its interleaved copy (DirectPlan::interleaved) at pairs: for pair t,
// element e = channels 2t and 2t + 1 at position e as int16 (an odd last channel paired with
// zeros, its weight's pair being zero); positions past the plane hold zeros.
ZT_S8_INLINE void interleave_channel_pairs(const Conv2dGeometry& g, const DirectPlan& p,
                                           const int8_t* x, int32_t* pairs) {
  const int64_t plane = g.in_h * g.in_w;
  for (int64_t t = 0; t < p.pairs; ++t) {
    const int8_t* a = x + 2 * t * plane;
    const int8_t* b = 2 * t + 1 < g.in_c ? a + plane : nullptr;
    int32_t* dst = pairs + t * p.positions;
    for (int64_t e = 0; e < p.positions; e += 16) {
      __m128i va, vb;
      if (e + 16 <= plane) {
        va = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + e));
        vb = b ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + e)) : _mm_setzero_si128();
      } else {  // the plane's last positions, through zeroed copies: no read past the image
        alignas(16) int8_t ta[16] = {}, tb[16] = {};
        const int64_t n = std::max<int64_t>(0, plane - e);
        __builtin_memcpy(ta, a + e, static_cast<size_t>(n));
        if (b) __builtin_memcpy(tb, b + e, static_cast<size_t>(n));
        va = _mm_load_si128(reinterpret_cast<const __m128i*>(ta));
        vb = _mm_load_si128(reinterpret_cast<const __m128i*>(tb));
      }
      __m256i* v = reinterpret_cast<__m256i*>(dst + e);
      _mm256_storeu_si256(v, _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(va, vb)));
      _mm256_storeu_si256(v + 1, _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(va, vb)));
    }
  }
}

// The pair images (DirectPlan::pair_images) of the padded image xp, which they follow; it holds
// every pair's second byte up to the extent (plan_pair_images), and those before it are zeros (a
// negative distance's first pairs, which no tap reads).
ZT_S8_INLINE void make_pair_images(const DirectPlan& p, int8_t* xp) {
  int32_t* images = reinterpret_cast<int32_t*>(xp + p.padded_bytes);
  for (int64_t j = 0; j < p.pair_images; ++j) {
    const int64_t d = p.diffs[j];
    int32_t* dst = images + j * p.pair_extent;
    for (int64_t e = 0; e < p.pair_extent; e += 16) {
      if (e + d >= 0) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(xp + e));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(xp + e + d));
        __m256i* v = reinterpret_cast<__m256i*>(dst + e);
        _mm256_storeu_si256(v, _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(a, b)));
        _mm256_storeu_si256(v + 1, _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(a, b)));
        continue;
      }
      for (int64_t i = e; i < e + 16; ++i) {
        const int8_t second = i + d >= 0 ? xp[i + d] : int8_t{0};
        dst[i] = static_cast<int32_t>(static_cast<uint16_t>(xp[i]) |
                                      static_cast<uint32_t>(static_cast<uint16_t>(second)) << 16);
      }
    }
  }
}

// One image x into the padded int8 copy of channel rows at xp (offset by 128 in quads).
ZT_S8_INLINE void copy_padded_image(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* x,
                                    int8_t* xp) {
  if (g.pad == 0 && !p.quads) {
    // Unpadded, the copy's planes are the image's: one copy, not one a row (of 7 bytes in
    // MobileNetV2's 7x7 planes).
    __builtin_memcpy(xp, x, static_cast<size_t>(g.in_numel()));
    return;
  }
  for (int64_t c = 0; c < g.in_c; ++c)
    for (int64_t ih = 0; ih < g.in_h; ++ih) {
      int8_t* dst = xp + (c * p.hp + ih + g.pad) * p.wp + g.pad;
      const int8_t* src = x + (c * g.in_h + ih) * g.in_w;
      if (!p.quads) {
        __builtin_memcpy(dst, src, static_cast<size_t>(g.in_w));
        continue;
      }
      copy_offset_128(dst, src, g.in_w);
    }
}

// One image x into the copies channel rows read: the padded copy, then its expanded copies in
// quads or its pair images; a 1x1 kernel's interleaved copy in pairs instead.
ZT_S8 void copy_channel_image(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* x,
                              const Scratch& s) {
  if (p.interleaved) return interleave_channel_pairs(g, p, x, static_cast<int32_t*>(s.image));
  int8_t* xp = static_cast<int8_t*>(s.image);
  copy_padded_image(g, p, x, xp);
#if ZT_S8_VNNI
  if (p.quads) expand_quads(p, xp, s.expanded);
#endif
  if (p.pair_images) make_pair_images(p, xp);
}

// The copy of channel rows in pairs at position q: the interleaved image of a 1x1 kernel or the
// pair images (int32 pairs), the padded int8 image otherwise.
ZT_S8_INLINE const void* pairs_image_at(const DirectPlan& p, const Scratch& s, int64_t q) {
  const char* image = static_cast<const char*>(s.image);
  if (p.interleaved) return reinterpret_cast<const int32_t*>(image) + q;
  if (p.pair_images) return reinterpret_cast<const int32_t*>(image + p.padded_bytes) + q;
  return image + q;
}

ZT_S8 void channel_rows_image(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* x,
                              const Scratch& s, int32_t* y) {
  copy_channel_image(g, p, x, s);
  int64_t oh = 0, ow = 0;  // of position q0
  const int64_t tile = p.quads ? kQuadRowNR : kNR;
  for (int64_t q0 = 0; q0 < p.positions; q0 += tile) {
    int64_t o0 = 0;
    const int16_t* w = s.weights;
    const void* xq = p.quads ? s.expanded + q0 : pairs_image_at(p, s, q0);
    for (; o0 + kMR <= g.out_c; o0 += kMR)
      channel_tile<kMR>(g, p, xq, w + o0 * 2 * p.pairs, s.off, s.comp + o0, o0, oh, ow, y);
    if (o0 < g.out_c)
      with_rows<kMR - 1>(g.out_c - o0, [&]<int R>() {
        channel_tile<R>(g, p, xq, w + o0 * 2 * p.pairs, s.off, s.comp + o0, o0, oh, ow, y);
      });
    for (ow += tile; ow >= p.wp;) ow -= p.wp, ++oh;
  }
}

#if ZT_S8_VNNI
// channel_rows_image in quads with the pooling fused (channel_tile_max_pooled): one tile of
// positions per pooled row, its rows to make_out(o0) (channel o0 the tile's first). Returns
// range_bits of the convolution's sums with kRanges (0 without).
template <bool kRanges, class MakeOut>
ZT_S8 int channel_rows_image_max_pooled(const Conv2dGeometry& g, const DirectPlan& p,
                                        const Pool2dGeometry& pool, const int8_t* x,
                                        const Scratch& s, const MakeOut& make_out) {
  copy_channel_image(g, p, x, s);
  Extremes e;
  const int16_t* w = s.weights;
  for (int64_t ph = 0; ph < pool.out_h; ++ph) {
    const int32_t* xq = s.expanded + ph * kQuadRowNR;
    int64_t o0 = 0;
    for (; o0 + kMR <= g.out_c; o0 += kMR)
      channel_tile_max_pooled<kMR, kRanges>(g, p, pool, xq, w + o0 * 2 * p.pairs, s.off,
                                            s.comp + o0, ph, e, make_out(o0));
    if (o0 < g.out_c)
      with_rows<kMR - 1>(g.out_c - o0, [&]<int R>() {
        channel_tile_max_pooled<R, kRanges>(g, p, pool, xq, w + o0 * 2 * p.pairs, s.off,
                                            s.comp + o0, ph, e, make_out(o0));
      });
  }
  return e.bits();
}
#endif

// One image in channel rows in pairs with the pooling fused (channel_pair_tile_max_pooled): tiles
// of 8 columns of two output rows; returns range_bits of the convolution's sums.
ZT_S8 int channel_pairs_image_max_pooled(const Conv2dGeometry& g, const DirectPlan& p,
                                         const Pool2dGeometry& pool, const int8_t* x,
                                         const Scratch& s, int32_t* y) {
  copy_channel_image(g, p, x, s);
  const int16_t* w = s.weights;
  const int64_t plane = pool.out_plane();
  PairExtremes e;
  for (int64_t ph = 0; ph < pool.out_h; ++ph)
    for (int64_t ow = 0; ow < g.out_w; ow += 8) {
      const void* xq = pairs_image_at(p, s, 2 * ph * p.wp + ow);
      int64_t o0 = 0;
      for (; o0 + kMR <= g.out_c; o0 += kMR)
        channel_pair_tile_max_pooled<kMR>(g, p, pool, xq, w + o0 * 2 * p.pairs, s.off, ph, ow, e,
                                          y + o0 * plane);
      if (o0 < g.out_c)
        with_rows<kMR - 1>(g.out_c - o0, [&]<int R>() {
          channel_pair_tile_max_pooled<R>(g, p, pool, xq, w + o0 * 2 * p.pairs, s.off, ph, ow, e,
                                          y + o0 * plane);
        });
    }
  return e.bits();
}

// ---- Pixel rows ----

// The sums of pixels pix[i] (an HWC image) over all steps, for the kNR output channels of a packed
// panel of 64 bytes a step: int16 pairs [pairs, kNR, 2] (dot_pairs_s16), or for T = int8_t u8 x s8
// quads [steps, kNR, 4] (dot_quads_u8s8, exact for u8 in [0, 127]); a pixel's step is one 32-bit
// broadcast.
template <class T, int MR = kMR>
ZT_S8_INLINE void pixel_sums(int64_t steps, const T* const* pix, const int32_t* off, const T* panel,
                             Acc<MR>& acc) {
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
  for (int64_t t = 0; t < steps; ++t) {
    const __m256i* b = reinterpret_cast<const __m256i*>(panel) + 2 * t;
    const __m256i b0 = _mm256_loadu_si256(b), b1 = _mm256_loadu_si256(b + 1);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      int32_t step;
      __builtin_memcpy(&step, pix[i] + off[t], sizeof step);
      const __m256i xv = _mm256_set1_epi32(step);
      if constexpr (sizeof(T) == 2) {
        acc[i][0] = dot_pairs_s16(acc[i][0], b0, xv);
        acc[i][1] = dot_pairs_s16(acc[i][1], b1, xv);
      } else {
        acc[i][0] = dot_quads_u8s8(acc[i][0], xv, b0);
        acc[i][1] = dot_quads_u8s8(acc[i][1], xv, b1);
      }
    }
  }
}

#if ZT_S8_VNNI
// pixel_sums in quads on 512 bits for the first MR of kQuadMR pixels of the image offset by 128
// (read as u8), into t (pixel i's kNR channel sums), less comp (128 times each channel's sum of
// weights): the sums start at -comp, the same int32 as subtracting it after. Not inlined: in the
// loops of pixel_image GCC moved the accumulators between registers every step.
template <int MR>
__attribute__((noinline)) ZT_S8 void pixel_quad_sums_512(int64_t steps,
                                                         const int8_t* const (&pix)[kQuadMR],
                                                         const int32_t* off, const int8_t* panel,
                                                         const int32_t* comp,
                                                         int32_t (&t)[kQuadMR][kNR]) {
  __m512i acc[MR];
  const __m512i start = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_loadu_si512(comp));
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) acc[i] = start;
  for (int64_t s = 0; s < steps; ++s) {
    const __m512i b = _mm512_loadu_si512(panel + s * kNR * 4);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      int32_t step;
      __builtin_memcpy(&step, pix[i] + off[s], sizeof step);
      acc[i] = dot_quads_u8s8(acc[i], _mm512_set1_epi32(step), b);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) _mm512_storeu_si512(t[i], acc[i]);
}

// The sums of the first `rows` pixels (rows of t) at least, in whole groups of 4: a plane
// smaller than a tile (MobileNetV2's 2x2 and 4x4 planes), or its last tile, computes no more.
ZT_S8_INLINE void pixel_quad_sums(int64_t rows, int64_t steps, const int8_t* const (&pix)[kQuadMR],
                                  const int32_t* off, const int8_t* panel, const int32_t* comp,
                                  int32_t (&t)[kQuadMR][kNR]) {
  static_assert(kQuadMR == 12, "a tile is 3 groups of 4 pixels");
  if (rows <= 4) return pixel_quad_sums_512<4>(steps, pix, off, panel, comp, t);
  if (rows <= 8) return pixel_quad_sums_512<8>(steps, pix, off, panel, comp, t);
  pixel_quad_sums_512<kQuadMR>(steps, pix, off, panel, comp, t);
}
#else
// pixel_sums in quads on 256 bits, less comp, for the first kLinearMR pixels: the linear layers'
// nonnegative rows (never the offset image, whose bytes pass 127).
__attribute__((noinline)) ZT_S8 void pixel_quad_sums(int64_t, int64_t steps,
                                                     const int8_t* const (&pix)[kQuadMR],
                                                     const int32_t* off, const int8_t* panel,
                                                     const int32_t* comp,
                                                     int32_t (&t)[kQuadMR][kNR]) {
  Acc<kLinearMR> acc;
  pixel_sums<int8_t, kLinearMR>(steps, pix, off, panel, acc);
  const __m256i* c = reinterpret_cast<const __m256i*>(comp);
#pragma GCC unroll 8
  for (int i = 0; i < kLinearMR; ++i)
    for (int v = 0; v < 2; ++v)
      _mm256_store_si256(reinterpret_cast<__m256i*>(t[i] + 8 * v),
                         _mm256_sub_epi32(acc[i][v], _mm256_loadu_si256(c + v)));
}
#endif

// Stores a pixel-rows tile (kMR pixels x kNR channels, t) into the [channels, plane] output at y
// (its first pixel and channel): transposed in registers, each channel's pixels one vector
// store. With `whole`, the 8 - kMR lanes past the tile's pixels are stored too: they belong to
// the next tile, stored after this one (the last tile of a plane stores only its pixels, and
// reads only them: pixel_quad_sums leaves a short tile's other rows unwritten). The
// tile comes through memory and the function is not inlined: inlined, the transposition's
// registers made GCC spill or shuffle the accumulators of the loop that fills the tile.
__attribute__((noinline)) ZT_S8 void store_pixel_tile(const int32_t (*t)[kNR], int64_t channels,
                                                      int64_t pixels, bool whole, int64_t plane,
                                                      int32_t* y) {
  static_assert(kMR <= 8, "a tile's pixels fit one vector");
  for (int v = 0; v < 2; ++v) {
    __m256i r[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i)
      r[i] = i < kMR && (whole || i < pixels)
                 ? _mm256_load_si256(reinterpret_cast<const __m256i*>(t[i] + 8 * v))
                 : _mm256_setzero_si256();
    transpose_8x8_s32(r);
    const int64_t n = channels - 8 * v < 8 ? channels - 8 * v : 8;
    for (int64_t j = 0; j < n; ++j) {
      int32_t* dst = y + (8 * v + j) * plane;
      if (whole)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), r[j]);
      else
        store_first_s32(dst, pixels, r[j]);
    }
  }
}

#if ZT_S8_VNNI
// Channels 4L .. 4L + 3 (those below `channels`) of a requantized tile: 128-bit lane L of c[j]
// is channel 4L + j's bytes, stored under `mask` at y + (4L + j) plane.
template <int L>
ZT_S8_INLINE void store_lane_channels(const __m512i (&c)[4], int64_t channels, __mmask16 mask,
                                      int64_t plane, int8_t* y) {
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j)
    if (4 * L + j < channels)
      _mm_mask_storeu_epi8(y + (4 * L + j) * plane, mask,
                           _mm512_maskz_extracti32x4_epi32(0xF, c[j], L));
}

// Stores a pixel-quads tile (t: kQuadMR pixels x kNR channels, channels o0 = 16 q.. at y, its
// first pixel and channel) requantized: each 4 pixels' vectors (their lanes are channels) are
// requantized with the panel's bias vector and narrowed by saturating packs (the clamp within
// int8 keeps its result), a byte shuffle makes dword c of each 4 pixels channel c's (one per
// 128-bit lane L: c = 4L + j), and two rounds of unpacks give each channel its 12 pixels, one
// 16-byte store per channel. With `whole`, all 16 bytes are stored, those past the tile's pixels
// belonging to pixels stored after (as store_pixel_tile's lanes). Not inlined, as
// store_pixel_tile.
template <bool kWide>
__attribute__((noinline)) ZT_S8 void store_pixel_tile_s8(const int32_t (&t)[kQuadMR][kNR],
                                                         const TileRequant& r, int64_t o0,
                                                         int64_t channels, int64_t pixels,
                                                         bool whole, int64_t plane, int8_t* y) {
  static_assert(kQuadMR == 12, "a tile is 3 groups of 4 pixels");
  const __mmask16 ks = avx512::first16(channels);
  const __m512i bias = r.bias ? _mm512_maskz_loadu_epi32(ks, r.bias + o0) : _mm512_setzero_si512();
  // In each 128-bit lane, byte 4j + i from byte 4i + j (a 4x4 transpose).
  const __m512i to_channels = _mm512_maskz_broadcast_i32x4(
      0xFFFF, _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  __m512i g[3];
#pragma GCC unroll 3
  for (int k = 0; k < 3; ++k) {
    if (4 * k >= pixels) {  // rows pixel_quad_sums left unwritten: stored by no mask
      g[k] = _mm512_setzero_si512();
      continue;
    }
    __m512i v[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i)
      v[i] = r.rq.lanes<kWide>(_mm512_add_epi32(_mm512_load_si512(t[4 * k + i]), bias));
    const __m512i bytes = avx512::packs_s8(v[0], v[1], v[2], v[3]);
    g[k] = _mm512_shuffle_epi8(_mm512_min_epi8(_mm512_max_epi8(bytes, r.lo), r.hi), to_channels);
  }
  // Lane L of c[j] holds channel 4L + j's pixels 0-11 (and 4 zero bytes).
  const __m512i zero = _mm512_setzero_si512();
  const __m512i ab_lo = _mm512_maskz_unpacklo_epi32(0xFFFF, g[0], g[1]),
                ab_hi = _mm512_maskz_unpackhi_epi32(0xFFFF, g[0], g[1]);
  const __m512i c_lo = _mm512_maskz_unpacklo_epi32(0xFFFF, g[2], zero),
                c_hi = _mm512_maskz_unpackhi_epi32(0xFFFF, g[2], zero);
  const __m512i c[4] = {_mm512_maskz_unpacklo_epi64(0xFF, ab_lo, c_lo),
                        _mm512_maskz_unpackhi_epi64(0xFF, ab_lo, c_lo),
                        _mm512_maskz_unpacklo_epi64(0xFF, ab_hi, c_hi),
                        _mm512_maskz_unpackhi_epi64(0xFF, ab_hi, c_hi)};
  const auto mask = static_cast<__mmask16>(whole ? 0xFFFF : (1u << pixels) - 1);
  store_lane_channels<0>(c, channels, mask, plane, y);
  store_lane_channels<1>(c, channels, mask, plane, y);
  store_lane_channels<2>(c, channels, mask, plane, y);
  store_lane_channels<3>(c, channels, mask, plane, y);
}
#endif

// Step t = (ki, j): elements lane * j .. lane * j + lane - 1 of kernel row ki, element e being
// tap kj = e / in_c of channel c = e % in_c (HWC order). Lanes lane * o .. of a panel row hold
// output channel o's weights of those elements, zero past the row's k * in_c elements and for
// channels past out_c.
template <typename T>
ZT_S8 void pack_pixels(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* w, T* weights,
                       int32_t* off) {
  constexpr int64_t kLane = 4 / sizeof(T);
  // Locals: stores of int8 may alias g and p, whose fields would be reloaded every element.
  const int64_t k = g.k, in_c = g.in_c, out_c = g.out_c, row = k * in_c, taps = k * k;
  const int64_t steps = p.row_steps, pairs = p.pairs, channels = p.panels * kNR;
  for (int64_t o = 0; o < channels; ++o) {
    T* lanes = weights + (o / kNR * pairs * kNR + o % kNR) * kLane;
    const int8_t* wo = w + o * in_c * taps;
    if (k == 1 && o < out_c) {
      // A 1x1 kernel's row is its weights as they lie: a step's at a time (4-byte copies of
      // int8; in ZO every pass packs new weights).
      int64_t j = 0;
      for (; kLane * j + kLane <= row; ++j) {
        if constexpr (kLane == 4)
          __builtin_memcpy(lanes + j * kNR * kLane, wo + 4 * j, 4);
        else
          for (int64_t e = 0; e < kLane; ++e) lanes[j * kNR * kLane + e] = wo[kLane * j + e];
      }
      if (j < steps)  // the last step's weights past the row are zero
        for (int64_t e = 0; e < kLane; ++e)
          lanes[j * kNR * kLane + e] = kLane * j + e < row ? wo[kLane * j + e] : T{0};
      continue;
    }
    for (int64_t ki = 0; ki < k; ++ki) {
      T* dst = lanes + ki * steps * kNR * kLane;
      for (int64_t e = 0, kj = 0, c = 0; e < steps * kLane; ++e) {  // e = kj * in_c + c
        dst[e / kLane * kNR * kLane + e % kLane] =
            o < out_c && e < row ? wo[c * taps + ki * k + kj] : T{0};
        if (++c == in_c) c = 0, ++kj;
      }
    }
  }
  int32_t* next = off;
  for (int64_t ki = 0; ki < k; ++ki)
    for (int64_t j = 0; j < steps; ++j)
      *next++ = static_cast<int32_t>(ki * p.wp * in_c + j * kLane);  // in elements of T
}

ZT_S8 void pack_pixel_rows(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* w,
                           const Scratch& s) {
  if (!p.quads) return pack_pixels(g, p, w, s.weights, s.off);
  pack_pixels(g, p, w, reinterpret_cast<int8_t*>(s.weights), s.off);
  const int64_t taps = g.patch_size();
  for (int64_t o = 0; o < p.panels * kNR; ++o)
    s.comp[o] = o < g.out_c ? offset_compensation(w + o * taps, taps) : 0;
}

// Pixels iw .. iw + 7 of an image row in CHW, `channels` of them (at most a word's: 8 / sizeof(T))
// at src, src + plane_in, ..., as words of 8 bytes, by a transpose in registers: pixel i's word
// at dst + i * stride (T = int8_t: x + 128, 128 past `channels`; T = int16_t: x, 0 past them),
// stored in order, so a word's elements past `channels` land on the next pixel's (stored next)
// or on the row's padding, as the one-pixel path's.
template <typename T>
ZT_S8_INLINE void hwc_pixels8(const int8_t* src, int64_t plane_in, int64_t channels, int64_t stride,
                              T* dst) {
  __m128i r[8];
#pragma GCC unroll 8
  for (int c = 0; c < 8; ++c)
    r[c] = c < channels ? _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + c * plane_in))
                        : _mm_setzero_si128();
  __m128i w[4];  // the words of pixels 2j and 2j + 1
  if constexpr (sizeof(T) == 1) {
    const __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]), a1 = _mm_unpacklo_epi8(r[2], r[3]);
    const __m128i a2 = _mm_unpacklo_epi8(r[4], r[5]), a3 = _mm_unpacklo_epi8(r[6], r[7]);
    const __m128i b0 = _mm_unpacklo_epi16(a0, a1), b1 = _mm_unpackhi_epi16(a0, a1);
    const __m128i b2 = _mm_unpacklo_epi16(a2, a3), b3 = _mm_unpackhi_epi16(a2, a3);
    const __m128i flip = _mm_set1_epi8(-128);
    w[0] = _mm_xor_si128(_mm_unpacklo_epi32(b0, b2), flip);
    w[1] = _mm_xor_si128(_mm_unpackhi_epi32(b0, b2), flip);
    w[2] = _mm_xor_si128(_mm_unpacklo_epi32(b1, b3), flip);
    w[3] = _mm_xor_si128(_mm_unpackhi_epi32(b1, b3), flip);
  } else {
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) r[c] = _mm_cvtepi8_epi16(r[c]);
    const __m128i a0 = _mm_unpacklo_epi16(r[0], r[1]), a1 = _mm_unpackhi_epi16(r[0], r[1]);
    const __m128i a2 = _mm_unpacklo_epi16(r[2], r[3]), a3 = _mm_unpackhi_epi16(r[2], r[3]);
    w[0] = _mm_unpacklo_epi32(a0, a2), w[1] = _mm_unpackhi_epi32(a0, a2);
    w[2] = _mm_unpacklo_epi32(a1, a3), w[3] = _mm_unpackhi_epi32(a1, a3);
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + 2 * j * stride), w[j]);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + (2 * j + 1) * stride),
                     _mm_unpackhi_epi64(w[j], w[j]));
  }
}

// One image x into the padded channels-last copy of pixel rows: T = int16_t (pairs) or int8_t
// (quads).
template <typename T>
ZT_S8 void copy_pixel_image(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* x, T* xh) {
  // Locals: stores of int8 may alias g and p, whose fields would be reloaded every element.
  const int64_t in_c = g.in_c, in_h = g.in_h, in_w = g.in_w, pad = g.pad, wp = p.wp;
  const int64_t plane_in = in_h * in_w;
  // Quads: x + 128 (the sign bit flipped), the padding 128 too. A pixel of up to 8 bytes is
  // made in a register and stored whole; its bytes past in_c, padding's value, land on the
  // next pixel (written next) or on padding.
  constexpr bool kQuads = sizeof(T) == 1;
  constexpr uint64_t kPad = kQuads ? 0x8080808080808080ull : 0;
  const bool by_word = in_c * static_cast<int64_t>(sizeof(T)) <= 8;
  // Without padding the copy's rows run on into each other (the 1x1 convolutions): the plane
  // is copied as one row, 8 pixels at a time down to planes of 8 pixels (a 7x7 image's rows
  // would go one pixel at a time).
  const int64_t rows = pad == 0 ? 1 : in_h, row_w = pad == 0 ? plane_in : in_w;
  for (int64_t ih = 0; ih < rows; ++ih) {
    if (row_w >= 8) {
      // 8 pixels at a time, the last 8 overlapping the ones before; a word's channels at a
      // time, the last word's overlapping the one before when more channels than a word.
      constexpr int64_t kWord = 8 / sizeof(T);
      for (int64_t iw = 0;; iw += 8) {
        if (iw + 8 > row_w) iw = row_w - 8;
        const int8_t* src = x + ih * row_w + iw;
        T* dst = xh + ((ih + pad) * wp + iw + pad) * in_c;
        if (by_word) {
          hwc_pixels8(src, plane_in, in_c, in_c, dst);
        } else {
          for (int64_t c = 0;; c += kWord) {
            if (c + kWord > in_c) c = in_c - kWord;
            hwc_pixels8(src + c * plane_in, plane_in, kWord, in_c, dst + c);
            if (c + kWord >= in_c) break;
          }
        }
        if (iw + 8 >= row_w) break;
      }
      continue;
    }
    for (int64_t iw = 0; iw < row_w; ++iw) {
      T* dst = xh + ((ih + pad) * wp + iw + pad) * in_c;
      const int8_t* src = x + ih * row_w + iw;
      if (!by_word) {
        for (int64_t c = 0; c < in_c; ++c)
          dst[c] = kQuads ? static_cast<T>(src[c * plane_in] ^ 0x80) : src[c * plane_in];
        continue;
      }
      uint64_t word = 0;
      for (int64_t c = 0; c < in_c; ++c)
        word |= static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(src[c * plane_in]))
                << (8 * sizeof(T) * c);
      word ^= kPad;  // quads: x + 128 below in_c, 128 past it
      __builtin_memcpy(dst, &word, sizeof word);
    }
  }
}

// The output channels of panel q (kNR, or fewer in the last).
int64_t panel_channels(const Conv2dGeometry& g, int64_t q) {
  return std::min(g.out_c - q * kNR, kNR);
}

// One image in pixel rows: T = int16_t (pairs) or int8_t (quads); each tile t (MR pixels x kNR
// channels: panel q's, the first `channels` of them out_c's; from output pixel m0 on, the first
// `pixels` of them the plane's) goes to store(t, q, channels, m0, pixels).
template <typename T, class Store>
ZT_S8 void pixel_image(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* x,
                       const Scratch& s, Store&& store) {
  T* xh = static_cast<T*>(s.image);
  copy_pixel_image(g, p, x, xh);
  const int64_t plane = g.out_plane();
  constexpr int MR = sizeof(T) == 1 ? kQuadMR : kMR;
  // Output pixel m0 is (oh0, ow0); the tiles step along it without dividing.
  int64_t oh0 = 0, ow0 = 0;
  for (int64_t m0 = 0; m0 < plane; m0 += MR) {
    // A last tile repeats its last pixel and drops the copies.
    const T* pix[MR];
    for (int64_t i = 0, oh = oh0, ow = ow0; i < MR; ++i) {
      if (m0 + i >= plane) {
        pix[i] = pix[i - 1];
        continue;
      }
      pix[i] = xh + (oh * g.stride * p.wp + ow * g.stride) * g.in_c;
      if (++ow == g.out_w) ow = 0, ++oh;
    }
    for (ow0 += MR; ow0 >= g.out_w;) ow0 -= g.out_w, ++oh0;
    const int64_t pixels = plane - m0 < MR ? plane - m0 : MR;
    for (int64_t q = 0; q < p.panels; ++q) {
      const T* panel = reinterpret_cast<const T*>(s.weights) + q * p.pairs * kNR * (4 / sizeof(T));
      alignas(64) int32_t t[MR][kNR];
      if constexpr (sizeof(T) == 1) {
#if ZT_S8_VNNI
        pixel_quad_sums(pixels, p.pairs, pix, s.off, panel, s.comp + q * kNR, t);
#endif
      } else {
        Acc<kMR> acc;
        pixel_sums(p.pairs, pix, s.off, panel, acc);
        for (int i = 0; i < kMR; ++i)
          for (int v = 0; v < 2; ++v)
            _mm256_store_si256(reinterpret_cast<__m256i*>(t[i] + 8 * v), acc[i][v]);
      }
      store(t, q, panel_channels(g, q), m0, pixels);
    }
  }
}

// pixel_image into int32 sums [out_c, plane] at y.
template <typename T>
ZT_S8 void pixel_image_sums(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* x,
                            const Scratch& s, int32_t* y) {
  const int64_t plane = g.out_plane();
  pixel_image<T>(g, p, x, s,
                 [&](const auto& t, int64_t q, int64_t channels, int64_t m0, int64_t pixels) {
                   // kMR pixels at a time; a whole store's lanes past them go to pixels stored
                   // after.
                   for (int64_t h = 0; h < pixels; h += kMR) {
                     const int64_t n = pixels - h < kMR ? pixels - h : kMR;
                     store_pixel_tile(t + h, channels, n, m0 + h + 8 <= plane, plane,
                                      y + q * kNR * plane + m0 + h);
                   }
                 });
}

#if ZT_S8_VNNI
// One image in pixel quads with the 2x2 max pooling of stride 2 fused (conv2d_s8_direct_pools):
// a tile's 12 pixels are 3 windows of 4, so each window's maximum is taken from the tile's sums
// and only the maxima go to store(m, q, channels, w0, count) (rows of m: windows w0.., count of
// them, to be stored alone; panel q's channels). With kRanges, returns range_bits of all the
// convolution's sums (0 without): its largest value is a window's maximum, its smallest is taken
// from every sum; a last tile's windows past the plane are neither computed nor taken.
template <bool kRanges, class Store>
ZT_S8 int pixel_image_max_pooled(const Conv2dGeometry& g, const DirectPlan& p,
                                 const Pool2dGeometry& pool, const int8_t* x, const Scratch& s,
                                 Store&& store) {
  constexpr int kWindows = kQuadMR / 4;
  static_assert(kWindows * 4 == kQuadMR && kWindows <= kMR, "a tile holds whole windows");
  int8_t* xh = static_cast<int8_t*>(s.image);
  copy_pixel_image(g, p, x, xh);
  const int64_t windows = pool.out_plane();
  Extremes e;
  alignas(64) int32_t m[kQuadMR][kNR] = {};  // the windows' maxima (kQuadMR rows: a whole tile)
  int64_t wh0 = 0, ww0 = 0;                  // window w0's row and column
  for (int64_t w0 = 0; w0 < windows; w0 += kWindows) {
    const int8_t* pix[kQuadMR];
    for (int64_t j = 0, wh = wh0, ww = ww0; j < kWindows; ++j) {
      for (int i = 0; i < 4; ++i) {
        const int64_t oh = 2 * wh + i / 2, ow = 2 * ww + i % 2;  // pixel i of the window
        pix[4 * j + i] = w0 + j < windows ? xh + (oh * g.stride * p.wp + ow * g.stride) * g.in_c
                                          : pix[4 * j + i - 4];
      }
      if (++ww == pool.out_w) ww = 0, ++wh;
    }
    for (ww0 += kWindows; ww0 >= pool.out_w;) ww0 -= pool.out_w, ++wh0;
    const int64_t count = windows - w0 < kWindows ? windows - w0 : kWindows;
    for (int64_t q = 0; q < p.panels; ++q) {
      const int8_t* panel = reinterpret_cast<const int8_t*>(s.weights) + q * p.pairs * kNR * 4;
      alignas(64) int32_t t[kQuadMR][kNR];
      pixel_quad_sums(4 * count, p.pairs, pix, s.off, panel, s.comp + q * kNR, t);
#pragma GCC unroll 4
      for (int j = 0; j < kWindows; ++j) {
        if (j >= count) break;  // not computed
        Lanes v[4];
        __builtin_memcpy(v, t[4 * j], sizeof v);
        const Lanes most = lanes_max(lanes_max(v[0], v[1]), lanes_max(v[2], v[3]));
        if constexpr (kRanges) {
          e.lo = lanes_min(e.lo, lanes_min(lanes_min(v[0], v[1]), lanes_min(v[2], v[3])));
          e.hi = lanes_max(e.hi, most);
        }
        __builtin_memcpy(m[j], &most, sizeof most);
      }
      store(m, q, panel_channels(g, q), w0, count);
    }
  }
  return e.bits();
}
#endif

// ---- Linear layers as pixel rows of 1x1 images ----

// C = A · B^T (a linear layer's forward) as the pixel rows of a 1x1 convolution: a tile is
// kLinearMR rows of A (12 on 512 bits in the VNNI build, 4 on 256 in the AVX2 one), each step a
// 32-bit broadcast of 4 of a row's k bytes, times a panel of 16 columns of B packed as the
// convolution's weights (pixel_quad_sums, no offset: A must be nonnegative, u8 as it stands).
// Scratch: the weights' key, the panels [panels, k / 4, 16, 4], the step offsets 4 s, a zero
// compensation of 16 lanes.
struct LinearPlan {
  int64_t steps, panels;
  int64_t packed_bytes() const { return panels * steps * kNR * 4; }
  int64_t bytes() const { return kKeyBytes + packed_bytes() + 4 * steps + 4 * kNR; }
};
LinearPlan linear_plan(int64_t n, int64_t k) {
  return {k / 4, (n + kNR - 1) / kNR};
}

// Where linear_tiles's tiles go (t: rows i0.., count of them; panel q's columns, cols of them):
// int32 into C [m, n];
struct LinearSums {
  int32_t* c;
  int64_t n;
  ZT_S8_INLINE void operator()(const int32_t (&t)[kQuadMR][kNR], int64_t i0, int64_t count,
                               int64_t q, int64_t cols) const {
#if ZT_S8_VNNI
    const __mmask16 mask = avx512::first16(cols);
    for (int64_t i = 0; i < count; ++i)
      _mm512_mask_storeu_epi32(c + (i0 + i) * n + q * kNR, mask, _mm512_load_si512(t[i]));
#else
    for (int64_t i = 0; i < count; ++i)
      for (int64_t v = 0; 8 * v < cols; ++v)
        store_lanes(c + (i0 + i) * n + q * kNR + 8 * v, std::min<int64_t>(8, cols - 8 * v),
                    _mm256_load_si256(reinterpret_cast<const __m256i*>(t[i] + 8 * v)));
#endif
  }
};
#if ZT_S8_VNNI
// or requantized with the columns' bias, as int8.
template <bool kWide>
struct LinearRequant {
  const TileRequant* r;
  int8_t* c;
  int64_t n;
  ZT_S8_INLINE void operator()(const int32_t (&t)[kQuadMR][kNR], int64_t i0, int64_t count,
                               int64_t q, int64_t cols) const {
    const __mmask16 mask = avx512::first16(cols);
    const __m512i b =
        r->bias ? _mm512_maskz_loadu_epi32(mask, r->bias + q * kNR) : _mm512_setzero_si512();
    for (int64_t i = 0; i < count; ++i)
      _mm_mask_storeu_epi8(c + (i0 + i) * n + q * kNR, mask,
                           _mm512_maskz_cvtepi32_epi8(
                               0xFFFF, (__m512i)r->clamped<kWide>(_mm512_load_si512(t[i]), b)));
  }
};

#endif

// linear_s8 with the tiles to store: false (nothing done) where it does not take the operands.
template <class Store>
ZT_S8 bool linear_tiles(int64_t m, int64_t n, int64_t k, const int8_t* a, const int8_t* b,
                        void* work, uint64_t weights_key, const Store& store) {
  // Whole steps only: the last row's broadcasts would read past it. Rows of A in [0, 127].
  if (k % 4 != 0 || k == 0) return false;
#if !ZT_S8_VNNI
  // AVX2: rows of 256 bytes and more are gemm_s8's (3x4 dot tiles, their horizontal sums spread
  // over the row, no packing): LeNet-5's fc1 (k = 400) 0.92x the time of these tiles, fc2 (120)
  // 1.35x and fc3 (84) 2.9x.
  if (k >= 256) return false;
#endif
  if (!all_nonneg_s8(a, m * k)) return false;  // the rows are contiguous
  const LinearPlan p = linear_plan(n, k);
  int8_t* packed = static_cast<int8_t*>(work) + kKeyBytes;
  auto* off = reinterpret_cast<int32_t*>(packed + p.packed_bytes());
  int32_t* zero = off + p.steps;
  uint64_t packed_key;
  __builtin_memcpy(&packed_key, work, sizeof packed_key);
  if (weights_key == 0 || packed_key != weights_key) {
    for (int64_t q = 0; q < p.panels; ++q)
      for (int64_t s = 0; s < p.steps; ++s)
        for (int64_t j = 0; j < kNR; ++j) {
          int8_t* dst = packed + ((q * p.steps + s) * kNR + j) * 4;
          const int64_t col = q * kNR + j;
          // 4-byte copies: a byte loop (through the stack) took a third of the linear layers'
          // time in LeNet-5's NPU forward, with the scan of A's rows one by one.
          if (col < n)
            __builtin_memcpy(dst, b + col * k + 4 * s, 4);
          else
            __builtin_memset(dst, 0, 4);
        }
    for (int64_t s = 0; s < p.steps; ++s) off[s] = static_cast<int32_t>(4 * s);
    for (int64_t j = 0; j < kNR; ++j) zero[j] = 0;
    __builtin_memcpy(work, &weights_key, sizeof weights_key);
  }
  for (int64_t i0 = 0; i0 < m; i0 += kLinearMR) {
    // A last tile repeats its last row and drops the copies.
    const int8_t* rows[kQuadMR];
    for (int64_t i = 0; i < kQuadMR; ++i) rows[i] = a + (i0 + i < m ? i0 + i : m - 1) * k;
    const int64_t count = m - i0 < kLinearMR ? m - i0 : kLinearMR;
    for (int64_t q = 0; q < p.panels; ++q) {
      alignas(64) int32_t t[kQuadMR][kNR];
      pixel_quad_sums(count, p.steps, rows, off, packed + q * p.steps * kNR * 4, zero, t);
      store(t, i0, count, q, std::min(n - q * kNR, kNR));
    }
  }
  return true;
}

// Packs w into the scratch unless it holds them under weights_key already: the calls of one
// pass pack once.
ZT_S8 void prepare_scratch(const Conv2dGeometry& g, const DirectPlan& p, const int8_t* w,
                           const Scratch& s, void* work, uint64_t weights_key) {
  uint64_t packed_key;
  __builtin_memcpy(&packed_key, work, sizeof packed_key);
  if (weights_key != 0 && packed_key == weights_key) return;
  // The padding stays zero: 128 in the offset image of quads.
  __builtin_memset(s.image, p.quads ? 0x80 : 0, static_cast<size_t>(p.image));
  if (p.channel_rows)
    pack_channel_rows(g, p, w, s);
  else
    pack_pixel_rows(g, p, w, s);
  __builtin_memcpy(work, &weights_key, sizeof weights_key);
}

}  // namespace

bool conv2d_s8_direct_pools(const Conv2dGeometry& g, const Pool2dGeometry& pool) {
  const DirectPlan p = run_plan(g);
  if (!(pool.k == 2 && pool.stride == 2 && pool.pad == 0 && pool.in_h == g.out_h &&
        pool.in_w == g.out_w && g.out_h % 2 == 0 && g.out_w % 2 == 0))
    return false;
  // Channel rows in pairs where a row's last tile of 8 columns reads within the padded row (so
  // within the copy); in quads, channel rows where a tile is two output rows, pixel rows always.
  if (!p.quads) return p.channel_rows && round_up(g.out_w, 8) <= p.wp;
  return !p.channel_rows || 2 * p.wp == kQuadRowNR;
}

ZT_S8 void conv2d_s8_direct_max_pooled(const Conv2dGeometry& g, const Pool2dGeometry& pool,
                                       int64_t images, const int8_t* x, const int8_t* w, int32_t* y,
                                       int32_t* ranges, void* work, uint64_t weights_key) {
  const DirectPlan p = run_plan(g);
  const Scratch s = scratch(p, work);
  prepare_scratch(g, p, w, s, work, weights_key);
  const int64_t windows = pool.out_plane();
  for (int64_t n = 0; n < images; ++n) {
    const int8_t* xn = x + n * g.in_numel();
    int32_t* yn = y + n * g.out_c * windows;
    if (!p.quads) {
      const int range = channel_pairs_image_max_pooled(g, p, pool, xn, s, yn);
      if (ranges) ranges[n] = range;
      continue;
    }
#if ZT_S8_VNNI
    const auto rows = [&](int64_t o0) {
      return PooledRowSums{yn + o0 * windows, windows, pool.out_w,
                           static_cast<__mmask16>((1u << pool.out_w) - 1)};
    };
    const auto tile = [&](const int32_t(&m)[kQuadMR][kNR], int64_t q, int64_t channels, int64_t w0,
                          int64_t count) {
      store_pixel_tile(m, channels, count, w0 + 8 <= windows, windows, yn + q * kNR * windows + w0);
    };
    const int range = p.channel_rows ? channel_rows_image_max_pooled<true>(g, p, pool, xn, s, rows)
                                     : pixel_image_max_pooled<true>(g, p, pool, xn, s, tile);
    if (ranges) ranges[n] = range;
#endif
  }
}

#if ZT_S8_VNNI
bool conv2d_s8_direct_requantizes(const Conv2dGeometry& g, const Pool2dGeometry* pool) {
  const DirectPlan p = run_plan(g);
  return p.quads && (pool ? conv2d_s8_direct_pools(g, *pool) : !p.channel_rows);
}

ZT_S8 void conv2d_s8_direct_requantized(const Conv2dGeometry& g, const Pool2dGeometry* pool,
                                        int64_t images, const int8_t* x, const int8_t* w,
                                        const Requantization& rq, int8_t* y, void* work,
                                        uint64_t weights_key) {
  const DirectPlan p = run_plan(g);
  const Scratch s = scratch(p, work);
  prepare_scratch(g, p, w, s, work, weights_key);
  const TileRequant r(rq);
  // The plane the output is stored in (pooled or not) and its tiles' pixels (or windows).
  const int64_t plane = pool ? pool->out_plane() : g.out_plane();
  with_shift_form(r.rq, [&]<bool kWide>(std::bool_constant<kWide>) {
    for (int64_t n = 0; n < images; ++n) {
      const int8_t* xn = x + n * g.in_numel();
      int8_t* yn = y + n * g.out_c * plane;
      const auto tile = [&](const int32_t(&t)[kQuadMR][kNR], int64_t q, int64_t channels,
                            int64_t m0, int64_t pixels) {
        const int64_t o0 = q * kNR;
        store_pixel_tile_s8<kWide>(t, r, o0, channels, pixels, m0 + 16 <= plane, plane,
                                   yn + o0 * plane + m0);
      };
      if (!pool) {
        pixel_image<int8_t>(g, p, xn, s, tile);
      } else if (p.channel_rows) {
        channel_rows_image_max_pooled<false>(g, p, *pool, xn, s, [&](int64_t o0) {
          return PooledRowRequant<kWide>{&r,
                                         r.bias ? r.bias + o0 : nullptr,
                                         yn + o0 * plane,
                                         plane,
                                         pool->out_w,
                                         static_cast<__mmask16>((1u << pool->out_w) - 1)};
        });
      } else {
        pixel_image_max_pooled<false>(g, p, *pool, xn, s, tile);
      }
    }
  });
}
#endif

ZT_S8 void conv2d_s8_direct(const Conv2dGeometry& g, int64_t images, const int8_t* x,
                            const int8_t* w, int32_t* y, void* work, uint64_t weights_key) {
  const DirectPlan p = run_plan(g);
  const Scratch s = scratch(p, work);
  prepare_scratch(g, p, w, s, work, weights_key);
  for (int64_t n = 0; n < images; ++n) {
    const int8_t* xn = x + n * g.in_numel();
    int32_t* yn = y + n * g.out_numel();
    if (p.channel_rows) channel_rows_image(g, p, xn, s, yn);
#if ZT_S8_VNNI
    else if (p.quads)
      pixel_image_sums<int8_t>(g, p, xn, s, yn);
#endif
    else
      pixel_image_sums<int16_t>(g, p, xn, s, yn);
  }
}

// ---- Linear layers' forward (the tiles above) ----

int64_t linear_s8_work_bytes(int64_t n, int64_t k) {
  return linear_plan(n, k).bytes();
}

ZT_S8 bool linear_s8(int64_t m, int64_t n, int64_t k, const int8_t* a, const int8_t* b, int32_t* c,
                     void* work, uint64_t weights_key) {
  return linear_tiles(m, n, k, a, b, work, weights_key, LinearSums{c, n});
}

#if ZT_S8_VNNI
ZT_S8 bool linear_s8_requantized(int64_t m, int64_t n, int64_t k, const int8_t* a, const int8_t* b,
                                 const Requantization& rq, int8_t* c, void* work,
                                 uint64_t weights_key) {
  const TileRequant r(rq);
  bool done = false;
  with_shift_form(r.rq, [&]<bool kWide>(std::bool_constant<kWide>) {
    done = linear_tiles(m, n, k, a, b, work, weights_key, LinearRequant<kWide>{&r, c, n});
  });
  return done;
}
#endif

}  // namespace zotrain::kernels::ZT_S8_NS
