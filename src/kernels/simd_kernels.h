// Internal to src/kernels: the register-tiled kernels, written once over a GCC vector type of
// ZT_SIMD_LANES floats and compiled once per instruction set (simd_portable.cpp,
// simd_avx2.cpp, simd_avx512.cpp, simd_neon.cpp), each copy in its own namespace ZT_SIMD_NS.
//
// This file includes nothing and uses no library templates: the including file includes
// kernel_set.h first and this file then switches the compiler's target (ZT_SIMD_TARGET), and any
// inline function or template instantiation emitted under that target could otherwise be merged
// by the linker with a baseline copy and run on a CPU without the instructions.
//
// Every kernel reduces to tile_product: an MR x kNR block of outputs held in registers, each
// element its own chain of multiply-adds in increasing reduction index. An element's value thus
// depends only on its operands, never on the block it was computed in, which is what makes the
// results independent of blocking and thread count.

// ZT_SIMD_TARGET, if the including file defines it, is the instruction set of this copy (a GCC
// target string): the code below is compiled for it, the including file's own code is not.
#if defined(ZT_SIMD_TARGET)
#define ZT_SIMD_PRAGMA(x) _Pragma(#x)
#define ZT_SIMD_PUSH_TARGET(t) ZT_SIMD_PRAGMA(GCC target(t))
#if defined(__clang__)
#define ZT_SIMD_PUSH_CLANG(t) \
  ZT_SIMD_PRAGMA(clang attribute push(__attribute__((target(t))), apply_to = function))
ZT_SIMD_PUSH_CLANG(ZT_SIMD_TARGET)
#else
#pragma GCC push_options
ZT_SIMD_PUSH_TARGET(ZT_SIMD_TARGET)
#endif
#endif

namespace zotrain::kernels::ZT_SIMD_NS {

constexpr int kLanes = ZT_SIMD_LANES;
typedef float V __attribute__((vector_size(kLanes * sizeof(float))));

// Tile rows and vectors: 6 x 2 accumulators leave registers for the two B vectors and a
// broadcast A element (of AVX2's 16). On 16 lanes (AVX-512) the tiles stay 16 columns wide,
// 8 x 1: 32 columns left half of each panel empty on LeNet-5's 16 channels (its forward pass
// measured 1.28x slower at 6 x 2, 0.79x the AVX2 time at 8 x 1, 1.1x at 12 x 1).
constexpr int kMR = kLanes == 16 ? 8 : 6;
constexpr int kNV = kLanes == 16 ? 1 : 2;
constexpr int kNR = kNV * kLanes;  // tile columns
// Channel-rows convolutions (below) tile positions, not channels: there 16 lanes take two
// vectors, 8 x 32 tiles (LeNet-5's conv1: 6 channels x 32 positions).
constexpr int kRowNV = kLanes == 16 ? 2 : kNV;
constexpr int kRowNR = kRowNV * kLanes;
// GEMM reduction block: a packed B panel of kKC x kNR floats (16 KB) stays in L1.
constexpr int64_t kKC = 256;

#define ZT_INLINE inline __attribute__((always_inline))

ZT_INLINE V load(const float* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
ZT_INLINE void store(float* p, V v) {
  __builtin_memcpy(p, &v, sizeof v);
}
ZT_INLINE V splat(float s) {
  return s - V{};  // s - 0 is s for every s, so this folds to a broadcast (0 + s would not: -0)
}
ZT_INLINE int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

// Where the p-th element along the reduction sits, relative to a row (A) or panel (B) start.
struct Contiguous {
  ZT_INLINE int64_t operator()(int64_t p) const { return p; }
};
struct Strided {
  int64_t stride;
  ZT_INLINE int64_t operator()(int64_t p) const { return p * stride; }
};
struct Indexed {  // a table of offsets: the taps of a convolution window
  const int32_t* offset;
  ZT_INLINE int64_t operator()(int64_t p) const { return offset[p]; }
};

template <int MR, int NV = kNV>
using Acc = V[MR][NV];

// acc(i, j) += A(i, p) * B(p, j) for p < kc in increasing p, one term at a time, with A(i, p) =
// a[i][ai(p)] and B(p, j) = b[bi(p) + j] for j < NV * kLanes: the tile's first NV vectors of
// columns (a narrow tile, NV = 1, computes its columns by the same operations as a wide one).
// tile_product does the same from zero.
template <int MR, int NV, class AI, class BI>
ZT_INLINE void tile_accumulate(int64_t kc, const float* const (&a)[MR], AI ai, const float* b,
                               BI bi, Acc<MR, NV>& acc) {
  // Unrolled twice: measured faster on the short reductions of convolutions.
#pragma GCC unroll 2
  for (int64_t p = 0; p < kc; ++p) {
    const float* bp = b + bi(p);
    V bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) bv[v] = load(bp + v * kLanes);
    const int64_t ap = ai(p);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const float s = a[i][ap];
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[i][v] += bv[v] * s;
    }
  }
}
template <int MR, int NV = kNV, class AI, class BI>
ZT_INLINE void tile_product(int64_t kc, const float* const (&a)[MR], AI ai, const float* b, BI bi,
                            Acc<MR, NV>& acc) {
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[i][v] = V{};
  }
  tile_accumulate<MR, NV>(kc, a, ai, b, bi, acc);
}

// Calls f(Rows<mr>{}) for 1 <= mr <= kMR, so that edge tiles run a kernel of their own height
// with the same per-element operations as full tiles.
template <int N>
struct Rows {
  static constexpr int value = N;
};
template <int N, class F>
ZT_INLINE void with_rows_from(int64_t mr, F& f) {
  if constexpr (N == 1)
    f(Rows<1>{});
  else if (mr == N)
    f(Rows<N>{});
  else
    with_rows_from<N - 1>(mr, f);
}
template <class F>
ZT_INLINE void with_rows(int64_t mr, F&& f) {
  with_rows_from<kMR>(mr, f);
}

// ---- GEMM ----

// Copies op(B)[pc, pc + kc) x [jc, jc + nr) into panel (kc rows of kNR floats), zero from
// column nr to `width`, the columns the tile reads: the padding keeps a tile inside the panel
// and adds nothing to real columns.
inline void pack_b(bool trans_b, const float* b, int64_t ldb, int64_t pc, int64_t kc, int64_t jc,
                   int64_t nr, int64_t width, float* panel) {
  if (!trans_b) {
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = b + (pc + p) * ldb + jc;
      float* dst = panel + p * kNR;
      for (int64_t j = 0; j < nr; ++j) dst[j] = src[j];
      for (int64_t j = nr; j < width; ++j) dst[j] = 0.0f;
    }
    return;
  }
  for (int64_t j = 0; j < width; ++j) {
    const float* src = b + (jc + j) * ldb + pc;
    if (j < nr)
      for (int64_t p = 0; p < kc; ++p) panel[p * kNR + j] = src[p];
    else
      for (int64_t p = 0; p < kc; ++p) panel[p * kNR + j] = 0.0f;
  }
}

// How a tile's sum meets C: the first reduction block overwrites C (beta == 0, C unread) or
// scales it by beta, later blocks add to it.
enum class Update { kOverwrite, kScale, kAdd };

template <int MR, int NV = kNV>
ZT_INLINE void store_gemm_tile(const Acc<MR, NV>& acc, float* c, int64_t ldc, int64_t nr,
                               float alpha, float beta, Update update) {
  // One expression for full and partial tiles, so that both round the same way.
  auto combine = [&](V t, V old) {
    if (update == Update::kOverwrite) return t * alpha;
    if (update == Update::kScale) return t * alpha + old * beta;
    return t * alpha + old;
  };
  for (int i = 0; i < MR; ++i) {
    float* ci = c + i * ldc;
    if (nr == NV * kLanes) {
      for (int v = 0; v < NV; ++v) {
        float* cv = ci + v * kLanes;
        store(cv, combine(acc[i][v], update == Update::kOverwrite ? V{} : load(cv)));
      }
    } else {
      float t[kNR] = {};
      if (update != Update::kOverwrite)
        for (int64_t j = 0; j < nr; ++j) t[j] = ci[j];
      for (int v = 0; v < NV; ++v) store(t + v * kLanes, combine(acc[i][v], load(t + v * kLanes)));
      for (int64_t j = 0; j < nr; ++j) ci[j] = t[j];
    }
  }
}

// One MR-row tile of C against a packed panel; `a` points at op(A)[first row][first k].
template <int MR, int NV>
void gemm_tile(bool trans_a, const float* a, int64_t lda, int64_t kc, const float* panel, float* c,
               int64_t ldc, int64_t nr, float alpha, float beta, Update update) {
  Acc<MR, NV> acc;
  const float* rows[MR];
  if (!trans_a) {
    for (int i = 0; i < MR; ++i) rows[i] = a + i * lda;
    tile_product<MR, NV>(kc, rows, Contiguous{}, panel, Strided{kNR}, acc);
  } else {
    for (int i = 0; i < MR; ++i) rows[i] = a + i;
    tile_product<MR, NV>(kc, rows, Strided{lda}, panel, Strided{kNR}, acc);
  }
  store_gemm_tile<MR, NV>(acc, c, ldc, nr, alpha, beta, update);
}

// Blocks of kKC along k (outermost, so that the blocks are the same for every element), then
// panels of kNR columns of op(B), packed once and swept by all row tiles. op(A) is read in
// place: a tile broadcasts one element of each of its rows per step. A panel of at most kLanes
// columns (a narrow block of a perturbed pass, the last panel) runs one vector wide.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  alignas(64) float panel[kKC * kNR];
  for (int64_t pc = 0; pc < k; pc += kKC) {
    const int64_t kc = min64(kKC, k - pc);
    const Update update = pc > 0         ? Update::kAdd
                          : beta == 0.0f ? Update::kOverwrite
                                         : Update::kScale;
    for (int64_t jc = 0; jc < n; jc += kNR) {
      const int64_t nr = min64(kNR, n - jc);
      const bool narrow = nr <= kLanes;
      pack_b(trans_b, b, ldb, pc, kc, jc, nr, narrow ? kLanes : kNR, panel);
      for (int64_t ic = 0; ic < m; ic += kMR) {
        const float* at = trans_a ? a + pc * lda + ic : a + ic * lda + pc;
        float* ct = c + ic * ldc + jc;
        with_rows(min64(kMR, m - ic), [&](auto rows) {
          constexpr int mr = decltype(rows)::value;
          if (narrow)
            gemm_tile<mr, 1>(trans_a, at, lda, kc, panel, ct, ldc, nr, alpha, beta, update);
          else
            gemm_tile<mr, kNV>(trans_a, at, lda, kc, panel, ct, ldc, nr, alpha, beta, update);
        });
      }
    }
  }
}

// ---- Convolution forward ----
//
// Two ways to run a convolution as register tiles without building the patch matrix; both sum
// the taps (channel, kernel row, kernel column) in the same order, so they give the same values.
//
// Channel rows (stride 1 only): a tile is MR output channels x kRowNR consecutive positions of the
// output laid out with the padded input's row length wp. Then tap t of output position q reads
// padded input element off[t] + q, so the B rows of a tile are contiguous runs of the padded
// image; the wp - out_w columns past each output row are computed and dropped.
//
// Pixel rows: a tile is MR output pixels (any stride) x kNR channels. A(pixel, t) is one element
// of the input, B the weights transposed and packed into panels of kNR channels; the tile is
// transposed into the NCHW output as it is stored.

struct ConvPlan {
  bool channel_rows;
  int64_t hp, wp;     // rows and row length of the padded image
  int64_t padded;     // floats of the padded copy of one image (0: the input is read in place)
  int64_t positions;  // channel rows: output positions computed, a multiple of kRowNR
  int64_t panels;     // pixel rows: panels of kNR output channels
};

inline int64_t round_up(int64_t a, int64_t b) {
  return (a + b - 1) / b * b;
}

// Picks the layout that wastes fewer multiply-adds on padding: the dropped columns and the
// channels of the last row tile for channel rows, the channels of the last panel for pixel rows.
inline ConvPlan conv_plan(const Conv2dGeometry& g) {
  ConvPlan p{};
  p.hp = g.in_h + 2 * g.pad;
  p.wp = g.in_w + 2 * g.pad;
  p.panels = (g.out_c + kNR - 1) / kNR;
  const double channel_rows_use =
      static_cast<double>(g.out_w * g.out_c) / static_cast<double>(p.wp * round_up(g.out_c, kMR));
  const double pixel_rows_use = static_cast<double>(g.out_c) / static_cast<double>(p.panels * kNR);
  p.channel_rows = g.stride == 1 && channel_rows_use >= pixel_rows_use;
  if (p.channel_rows) {
    p.positions = round_up(g.out_h * p.wp, kRowNR);
    // The last tile reads up to the last tap's offset past its last position.
    const int64_t last_tap = ((g.in_c - 1) * p.hp + g.k - 1) * p.wp + g.k - 1;
    p.padded = p.positions + last_tap;
  } else if (g.pad > 0) {
    p.padded = g.in_c * p.hp * p.wp;
  }
  return p;
}

// Scratch layout: the padded image, then (pixel rows) the packed weights and the bias padded to
// whole panels, then the tap offsets as int32.
int64_t conv2d_forward_work(const Conv2dGeometry& g) {
  const ConvPlan p = conv_plan(g);
  const int64_t packed = p.channel_rows ? 0 : p.panels * kNR * (g.patch_size() + 1);
  return p.padded + packed + g.patch_size();
}

// Offsets of the taps (channel, kernel row, kernel column) in an image of hp x wp.
inline void tap_offsets(const Conv2dGeometry& g, int64_t hp, int64_t wp, int32_t* off) {
  int64_t t = 0;
  for (int64_t c = 0; c < g.in_c; ++c)
    for (int64_t ki = 0; ki < g.k; ++ki)
      for (int64_t kj = 0; kj < g.k; ++kj) off[t++] = static_cast<int32_t>((c * hp + ki) * wp + kj);
}

// Copies one image into the interior of the padded buffer (hp x wp per channel); the border
// stays as it was (zero).
inline void pad_image(const Conv2dGeometry& g, int64_t hp, int64_t wp, const float* x, float* xp) {
  for (int64_t c = 0; c < g.in_c; ++c)
    for (int64_t ih = 0; ih < g.in_h; ++ih) {
      const float* src = x + (c * g.in_h + ih) * g.in_w;
      float* dst = xp + (c * hp + ih + g.pad) * wp + g.pad;
      for (int64_t iw = 0; iw < g.in_w; ++iw) dst[iw] = src[iw];
    }
}

// Stores a channel-rows tile plus bias: output channels o0.., positions from (oh, ow) on along
// the wp-long rows. Vectors that lie in the valid part of one output row are stored whole, the
// others in runs of lanes within one row, dropping the lanes past out_w.
template <int MR>
ZT_INLINE void store_channel_rows(const Acc<MR, kRowNV>& acc, const Conv2dGeometry& g, int64_t wp,
                                  int64_t o0, int64_t oh, int64_t ow, const float* b, float* y) {
  const int64_t plane = g.out_plane();
  V bias[MR];
  for (int i = 0; i < MR; ++i) bias[i] = splat(b ? b[o0 + i] : 0.0f);
  for (int v = 0; v < kRowNV; ++v) {
    int64_t r = oh, c = ow + v * kLanes;
    if (c + kLanes <= g.out_w) {
      for (int i = 0; i < MR; ++i)
        store(y + (o0 + i) * plane + r * g.out_w + c, acc[i][v] + bias[i]);
      continue;
    }
    float t[MR][kLanes];
    for (int i = 0; i < MR; ++i) store(t[i], acc[i][v] + bias[i]);
    for (int64_t u = 0; u < kLanes;) {  // runs of lanes within one padded row
      for (; c >= wp; c -= wp) ++r;
      const int64_t run = min64(kLanes - u, wp - c);
      if (r < g.out_h && c < g.out_w) {
        const int64_t len = min64(run, g.out_w - c);
        for (int i = 0; i < MR; ++i)
          for (int64_t e = 0; e < len; ++e) y[(o0 + i) * plane + r * g.out_w + c + e] = t[i][u + e];
      }
      u += run, c += run;
    }
  }
}

inline void conv_channel_rows(const Conv2dGeometry& g, const ConvPlan& p, int64_t images,
                              const float* x, const float* w, const float* b, float* y,
                              float* work) {
  const int64_t taps = g.patch_size();
  float* xp = work;
  int32_t* off = reinterpret_cast<int32_t*>(work + p.padded);
  tap_offsets(g, p.hp, p.wp, off);
  for (int64_t i = 0; i < p.padded; ++i) xp[i] = 0.0f;
  for (int64_t n = 0; n < images; ++n) {
    pad_image(g, p.hp, p.wp, x + n * g.in_numel(), xp);
    float* yn = y + n * g.out_numel();
    int64_t oh = 0, ow = 0;  // of position q0
    for (int64_t q0 = 0; q0 < p.positions; q0 += kRowNR) {
      for (int64_t o0 = 0; o0 < g.out_c; o0 += kMR)
        with_rows(min64(kMR, g.out_c - o0), [&](auto rows) {
          constexpr int MR = decltype(rows)::value;
          const float* wr[MR];
          for (int i = 0; i < MR; ++i) wr[i] = w + (o0 + i) * taps;
          Acc<MR, kRowNV> acc;
          tile_product<MR, kRowNV>(taps, wr, Contiguous{}, xp + q0, Indexed{off}, acc);
          store_channel_rows<MR>(acc, g, p.wp, o0, oh, ow, b, yn);
        });
      for (ow += kRowNR; ow >= p.wp;) ow -= p.wp, ++oh;
    }
  }
}

// Stores a pixel-rows tile plus bias, transposed: pixels m0.. of the plane, channels o0...
template <int MR>
ZT_INLINE void store_pixel_rows(const Acc<MR>& acc, const Conv2dGeometry& g, int64_t m0, int64_t o0,
                                const float* bias, float* y) {
  float t[MR][kNR];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < kNV; ++v)
      store(t[i] + v * kLanes, acc[i][v] + load(bias + o0 + v * kLanes));
  const int64_t plane = g.out_plane(), channels = min64(kNR, g.out_c - o0);
  for (int64_t j = 0; j < channels; ++j) {
    float* dst = y + (o0 + j) * plane + m0;
    for (int i = 0; i < MR; ++i) dst[i] = t[i][j];
  }
}

inline void conv_pixel_rows(const Conv2dGeometry& g, const ConvPlan& p, int64_t images,
                            const float* x, const float* w, const float* b, float* y, float* work) {
  const int64_t taps = g.patch_size(), plane = g.out_plane();
  float* xp = work;
  float* packed = work + p.padded;  // panel q: taps x kNR, weights transposed
  float* bias = packed + p.panels * kNR * taps;
  int32_t* off = reinterpret_cast<int32_t*>(bias + p.panels * kNR);
  for (int64_t o = 0; o < p.panels * kNR; ++o) {
    float* dst = packed + (o / kNR) * taps * kNR + o % kNR;
    for (int64_t t = 0; t < taps; ++t) dst[t * kNR] = o < g.out_c ? w[o * taps + t] : 0.0f;
    bias[o] = o < g.out_c && b ? b[o] : 0.0f;
  }
  tap_offsets(g, p.hp, p.wp, off);
  for (int64_t i = 0; i < p.padded; ++i) xp[i] = 0.0f;
  for (int64_t n = 0; n < images; ++n) {
    const float* image = x + n * g.in_numel();
    if (p.padded > 0) pad_image(g, p.hp, p.wp, image, xp), image = xp;
    float* yn = y + n * g.out_numel();
    for (int64_t m0 = 0; m0 < plane; m0 += kMR)
      with_rows(min64(kMR, plane - m0), [&](auto rows) {
        constexpr int MR = decltype(rows)::value;
        const float* pix[MR];
        for (int i = 0; i < MR; ++i) {
          const int64_t oh = (m0 + i) / g.out_w, ow = (m0 + i) - oh * g.out_w;
          pix[i] = image + oh * g.stride * p.wp + ow * g.stride;
        }
        for (int64_t q = 0; q < p.panels; ++q) {
          Acc<MR> acc;
          tile_product<MR>(taps, pix, Indexed{off}, packed + q * taps * kNR, Strided{kNR}, acc);
          store_pixel_rows<MR>(acc, g, m0, q * kNR, bias, yn);
        }
      });
  }
}

void conv2d_forward(const Conv2dGeometry& g, int64_t images, const float* x, const float* w,
                    const float* b, float* y, float* work) {
  const ConvPlan p = conv_plan(g);
  if (p.channel_rows)
    conv_channel_rows(g, p, images, x, w, b, y, work);
  else
    conv_pixel_rows(g, p, images, x, w, b, y, work);
}

// ---- Convolution weight gradient, stride 1 ----
//
// dw(o, t) = the sum over output positions q of dy(o, q) * x(off[t] + q), with q on the output
// rows laid out with the padded input's row length wp (as for channel rows) and dy zero on the
// extra columns: both factors are then contiguous along q. A tile is MR channels x kNV taps of
// vector accumulators holding one partial sum per lane; the lanes carry on over all images in a
// buffer and are summed once at the end, lane by lane in order. Images are laid out a block at
// a time, so that a tile keeps its accumulators in registers over the block's images: small
// planes (ResNet's 4x4 and 7x7 stages) sweep a few vectors per image, fewer than the
// accumulators a tile loads and stores. Each lane still sums its terms image by image in order.

struct GradPlan {
  int64_t hp, wp;
  int64_t positions;  // output positions swept, a multiple of kLanes
  int64_t padded;     // floats of the padded image, with room for the last vector of each tap
  int64_t tap_slots;  // taps rounded up to whole tiles
  int64_t block;      // images laid out at a time
};

inline GradPlan grad_plan(const Conv2dGeometry& g) {
  GradPlan p;
  p.hp = g.in_h + 2 * g.pad;
  p.wp = g.in_w + 2 * g.pad;
  p.positions = round_up(g.out_h * p.wp, kLanes);
  p.padded = p.positions + ((g.in_c - 1) * p.hp + g.k - 1) * p.wp + g.k - 1;
  p.tap_slots = round_up(g.patch_size(), kNV);
  // About 256 KB of images and dy per block (an L2's worth), 1 to 16 images.
  constexpr int64_t kBlockFloats = 64 * 1024;
  const int64_t fit = kBlockFloats / (p.padded + g.out_c * p.positions);
  p.block = fit < 1 ? 1 : min64(fit, 16);
  return p;
}

// Small planes (MobileNetV2's 1x1 convolutions on 2x2 to 8x8, ResNet's last stages) leave the
// sweep above a vector or two per image and tile, mostly loop overhead. There the same lane sums
// are computed the other way round: lane u of the sweep sums the terms of the positions
// q = u (mod kLanes), image by image, so for each u it is a product whose reduction runs over
// the (image, position) pairs of that class in order, tiled as MR channels x kNR taps with the
// taps in the vector lanes. Positions outside the output (padding columns, the rounding of
// `positions`) added exact zeros there and are left out here; the lane sums are then added in
// order as above. Same bits, any block of images.
constexpr int64_t kSmallGradPlane = 64;

inline bool small_grad_plane(const Conv2dGeometry& g) {
  return g.out_plane() <= kSmallGradPlane;
}

// Images a block of panels holds: about 64 KB of panels.
inline int64_t small_grad_block(const Conv2dGeometry& g) {
  const int64_t fit = 16 * 1024 / (g.out_plane() * kNR);
  return fit < 1 ? 1 : fit;
}

// Scratch layout: lane sums [out_c][kLanes][kNR], a block's panels [block * plane][kNR] (the
// classes one after the other), their dy offsets (int32).
inline int64_t small_grad_work(const Conv2dGeometry& g) {
  const int64_t pairs = small_grad_block(g) * g.out_plane();
  return g.out_c * kLanes * kNR + pairs * kNR + pairs;
}

void small_plane_weight_grad(const Conv2dGeometry& g, int64_t o0, int64_t o1, int64_t images,
                             const float* x, const float* dy, float* dw, float* work) {
  const int64_t taps = g.patch_size(), channels = o1 - o0, plane = g.out_plane();
  const int64_t wp = g.in_w + 2 * g.pad, kk = g.k * g.k;
  const int64_t block = min64(small_grad_block(g), images);
  const bool pointwise = g.k == 1 && g.pad == 0;
  // The output positions of each class, as q on the padded grid, in increasing q.
  int64_t q_of[kSmallGradPlane], first[kLanes + 1];
  int64_t m = 0;
  for (int u = 0; u < kLanes; ++u) {
    first[u] = m;
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow)
        if ((oh * wp + ow) % kLanes == u) q_of[m++] = oh * wp + ow;
  }
  first[kLanes] = m;
  float* lanes = work;
  float* panels = lanes + channels * kLanes * kNR;
  int32_t* offsets = reinterpret_cast<int32_t*>(panels + block * plane * kNR);
  // Pair (b, r) of class u, image b of a block, is row first[u] * nb + b * (the class's
  // positions) + r of a block of nb images; its dy offset from the block's first image.
  auto row_of = [&](int u, int64_t nb, int64_t b, int64_t r) {
    return first[u] * nb + b * (first[u + 1] - first[u]) + r;
  };
  auto set_offsets = [&](int64_t nb) {
    for (int u = 0; u < kLanes; ++u)
      for (int64_t b = 0; b < nb; ++b)
        for (int64_t r = 0; r < first[u + 1] - first[u]; ++r) {
          const int64_t q = q_of[first[u] + r];
          offsets[row_of(u, nb, b, r)] =
              static_cast<int32_t>(b * g.out_c * plane + q / wp * g.out_w + q % wp);
        }
  };
  int64_t offsets_for = block;  // the block length the offsets are laid out for
  set_offsets(block);
  for (int64_t jc = 0; jc < taps; jc += kNR) {
    const int64_t nr = min64(kNR, taps - jc);
    // Tap j of the panel: its kernel row and column, and its offset from the window's corner.
    int64_t tap_row[kNR], tap_col[kNR], tap_at[kNR];
    for (int64_t j = 0; j < kNR; ++j) {
      const int64_t t = min64(jc + j, taps - 1), c = t / kk;
      tap_row[j] = t / g.k % g.k, tap_col[j] = t % g.k;
      tap_at[j] = (c * g.in_h + tap_row[j]) * g.in_w + tap_col[j];
    }
    for (int64_t n0 = 0; n0 < images; n0 += block) {
      const int64_t nb = min64(block, images - n0);
      if (nb != offsets_for) set_offsets(offsets_for = nb);  // a shorter last block, and back
      if (pointwise) {
        // Tap j is input channel jc + j and q the position m itself (class m mod kLanes, its
        // r = m / kLanes): each channel's plane is read in order, without the window's tests.
        for (int64_t b = 0; b < nb; ++b)
          for (int64_t m = 0; m < plane; ++m) {
            float* out = panels + row_of(static_cast<int>(m % kLanes), nb, b, m / kLanes) * kNR;
            const float* src = x + (n0 + b) * g.in_numel() + jc * plane + m;
            for (int64_t j = 0; j < nr; ++j) out[j] = src[j * plane];
            for (int64_t j = nr; j < kNR; ++j) out[j] = 0.0f;
          }
      } else {
        for (int u = 0; u < kLanes; ++u)
          for (int64_t b = 0; b < nb; ++b)
            for (int64_t r = 0; r < first[u + 1] - first[u]; ++r) {
              const int64_t q = q_of[first[u] + r], oh = q / wp, ow = q % wp;
              const int64_t ih = oh - g.pad, iw = ow - g.pad;  // the window's corner
              const int64_t corner = (n0 + b) * g.in_numel() + ih * g.in_w + iw;
              float* out = panels + row_of(u, nb, b, r) * kNR;
              for (int64_t j = 0; j < kNR; ++j) {
                const bool inside = jc + j < taps && ih + tap_row[j] >= 0 &&
                                    ih + tap_row[j] < g.in_h && iw + tap_col[j] >= 0 &&
                                    iw + tap_col[j] < g.in_w;
                out[j] = inside ? x[corner + tap_at[j]] : 0.0f;
              }
            }
      }
      for (int64_t oc = 0; oc < channels; oc += kMR)
        with_rows(min64(kMR, channels - oc), [&](auto rows) {
          constexpr int MR = decltype(rows)::value;
          const float* d[MR];
          for (int i = 0; i < MR; ++i) d[i] = dy + (n0 * g.out_c + o0 + oc + i) * plane;
          for (int u = 0; u < kLanes; ++u) {
            auto lane = [&](int i, int v) {
              return lanes + ((oc + i) * kLanes + u) * kNR + v * kLanes;
            };
            Acc<MR> acc;
            for (int i = 0; i < MR; ++i)
              for (int v = 0; v < kNV; ++v) acc[i][v] = n0 == 0 ? V{} : load(lane(i, v));
            tile_accumulate<MR, kNV>(nb * (first[u + 1] - first[u]), d,
                                     Indexed{offsets + first[u] * nb}, panels + first[u] * nb * kNR,
                                     Strided{kNR}, acc);
            for (int i = 0; i < MR; ++i)
              for (int v = 0; v < kNV; ++v) store(lane(i, v), acc[i][v]);
          }
          // After the last block, the tile's lane sums while they are in L1.
          if (n0 + nb < images) return;
          for (int64_t o = oc; o < oc + MR; ++o)
            for (int64_t j = 0; j < nr; ++j) {
              const float* l = lanes + o * kLanes * kNR + j;
              float sum = l[0];
              for (int u = 1; u < kLanes; ++u) sum += l[u * kNR];
              dw[(o0 + o) * taps + jc + j] += sum;
            }
        });
    }
  }
}

// Scratch layout: a block of padded images, their dy on the padded grid, lane sums, tap offsets
// (int32).
int64_t conv2d_weight_grad_work(const Conv2dGeometry& g) {
  if (small_grad_plane(g)) return small_grad_work(g);
  const GradPlan p = grad_plan(g);
  return p.block * (p.padded + g.out_c * p.positions) + g.out_c * p.tap_slots * kLanes +
         g.patch_size();
}

void conv2d_weight_grad(const Conv2dGeometry& g, int64_t o0, int64_t o1, int64_t images,
                        const float* x, const float* dy, float* dw, float* work) {
  if (small_grad_plane(g)) return small_plane_weight_grad(g, o0, o1, images, x, dy, dw, work);
  const GradPlan p = grad_plan(g);
  const int64_t taps = g.patch_size(), channels = o1 - o0, plane = g.out_plane();
  const int64_t block = min64(p.block, images);
  float* xp = work;                                     // [block][padded]
  float* dyp = xp + block * p.padded;                   // [block][channels][positions]
  float* lanes = dyp + block * channels * p.positions;  // [channels, tap_slots, kLanes]
  int32_t* off = reinterpret_cast<int32_t*>(lanes + channels * p.tap_slots * kLanes);
  tap_offsets(g, p.hp, p.wp, off);
  for (int64_t i = 0; i < block * (p.padded + channels * p.positions); ++i) xp[i] = 0.0f;
  for (int64_t i = 0; i < channels * p.tap_slots * kLanes; ++i) lanes[i] = 0.0f;
  for (int64_t n0 = 0; n0 < images; n0 += block) {
    const int64_t nb = min64(block, images - n0);
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t n = n0 + b;
      pad_image(g, p.hp, p.wp, x + n * g.in_numel(), xp + b * p.padded);
      for (int64_t o = 0; o < channels; ++o)
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const float* src = dy + (n * g.out_c + o0 + o) * plane + oh * g.out_w;
          float* dst = dyp + (b * channels + o) * p.positions + oh * p.wp;
          for (int64_t ow = 0; ow < g.out_w; ++ow) dst[ow] = src[ow];
        }
    }
    for (int64_t oc = 0; oc < channels; oc += kMR)
      with_rows(min64(kMR, channels - oc), [&](auto rows) {
        constexpr int MR = decltype(rows)::value;
        for (int64_t t0 = 0; t0 < taps; t0 += kNV) {
          auto lane = [&](int i, int v) {
            return lanes + ((oc + i) * p.tap_slots + t0 + v) * kLanes;
          };
          Acc<MR> acc;
          for (int i = 0; i < MR; ++i)
            for (int v = 0; v < kNV; ++v) acc[i][v] = load(lane(i, v));
          for (int64_t b = 0; b < nb; ++b) {
            const float* d[MR];
            for (int i = 0; i < MR; ++i) d[i] = dyp + (b * channels + oc + i) * p.positions;
            // A last tile with fewer taps repeats the last one and drops the copy.
            const float* xt[kNV];
            for (int v = 0; v < kNV; ++v) xt[v] = xp + b * p.padded + off[min64(t0 + v, taps - 1)];
#pragma GCC unroll 2
            for (int64_t q = 0; q < p.positions; q += kLanes) {
              V xv[kNV];
#pragma GCC unroll 8
              for (int v = 0; v < kNV; ++v) xv[v] = load(xt[v] + q);
#pragma GCC unroll 8
              for (int i = 0; i < MR; ++i) {
                const V dv = load(d[i] + q);
#pragma GCC unroll 8
                for (int v = 0; v < kNV; ++v) acc[i][v] += dv * xv[v];
              }
            }
          }
          for (int i = 0; i < MR; ++i)
            for (int v = 0; v < kNV; ++v) store(lane(i, v), acc[i][v]);
        }
      });
  }
  for (int64_t o = 0; o < channels; ++o)
    for (int64_t t = 0; t < taps; ++t) {
      const float* l = lanes + (o * p.tap_slots + t) * kLanes;
      float sum = l[0];
      for (int u = 1; u < kLanes; ++u) sum += l[u];
      dw[(o0 + o) * taps + t] += sum;
    }
}

// ---- Depthwise 3x3 convolution ----
//
// The driver (conv2d.cpp) lays a plane out so that every tap of a 3x3 window is one fixed offset
// from the output position; these are the vector loops over such a layout. Each output sums its
// terms in increasing tap order, so a value depends on nothing but its operands.

// out[q] = init + sum over t < T of w[t] * in[q + off[t]], for q in [0, n) rounded up to whole
// vectors (out and in hold that much).
template <int T>
void tap_sums_of(int64_t n, const float* w, const int64_t* off, float init, const float* in,
                 float* out) {
  V wv[T];
  for (int t = 0; t < T; ++t) wv[t] = splat(w[t]);
  for (int64_t q = 0; q < n; q += kLanes) {
    V acc = splat(init);
    for (int t = 0; t < T; ++t) acc += wv[t] * load(in + q + off[t]);
    store(out + q, acc);
  }
}

// The 3x3 taps at stride 1 or 2 fall into phases of 9, 4, 2 or 1 taps (conv2d.cpp): calls
// f(Taps<T>{}) for the count.
template <int N>
struct Taps {
  static constexpr int value = N;
};
template <class F>
ZT_INLINE void with_phase_taps(int taps, F&& f) {
  switch (taps) {
    case 1:
      return f(Taps<1>{});
    case 2:
      return f(Taps<2>{});
    case 4:
      return f(Taps<4>{});
    default:
      return f(Taps<9>{});
  }
}

void tap_sums(int64_t n, int taps, const float* w, const int64_t* off, float init, const float* in,
              float* out) {
  with_phase_taps(taps, [&](auto t) { tap_sums_of<decltype(t)::value>(n, w, off, init, in, out); });
}

// Vectors of kDepthwiseGroup floats whatever the set's lanes (GCC splits them into narrower
// registers, or leaves half a wider one unused: the AVX-512 set keeps the AVX2 build).
template <int T>
void tap_sums_interleaved_of(int64_t n, const float* w, const int64_t* off, const float* init,
                             const float* in, float* out) {
  typedef float G __attribute__((vector_size(kDepthwiseGroup * sizeof(float))));
  G wv[T], start;
  __builtin_memcpy(wv, w, sizeof wv);
  __builtin_memcpy(&start, init, sizeof start);
  for (int64_t q = 0; q < n; ++q) {
    G acc = start;
    for (int t = 0; t < T; ++t) {
      G v;
      __builtin_memcpy(&v, in + (q + off[t]) * kDepthwiseGroup, sizeof v);
      acc += wv[t] * v;
    }
    __builtin_memcpy(out + q * kDepthwiseGroup, &acc, sizeof acc);
  }
}

void tap_sums_interleaved(int64_t n, int taps, const float* w, const int64_t* off,
                          const float* init, const float* in, float* out) {
  with_phase_taps(
      taps, [&](auto t) { tap_sums_interleaved_of<decltype(t)::value>(n, w, off, init, in, out); });
}

// sums[t] += sum over q in [0, n) rounded up to whole vectors of a[q] * in[q + off[t]], for the
// 9 taps: one vector of partial sums per tap, whose lanes are added in order at the end.
void tap_dots(int64_t n, const float* a, const int64_t* off, const float* in, float* sums) {
  constexpr int kTaps = 9;
  V acc[kTaps] = {};
  for (int64_t q = 0; q < n; q += kLanes) {
    const V av = load(a + q);
    for (int t = 0; t < kTaps; ++t) acc[t] += av * load(in + q + off[t]);
  }
  for (int t = 0; t < kTaps; ++t) {
    float s = acc[t][0];
    for (int l = 1; l < kLanes; ++l) s += acc[t][l];
    sums[t] += s;
  }
}

// tap_dots's lane l sums the positions q = l (mod kLanes) in increasing q; here each such class is
// one running sum per channel, the classes then added in lane order. Positions from n up to
// tap_dots's whole vectors hold zero dy there and are left out (their products are zeros).
void tap_dots_interleaved(int64_t n, const float* a, const int64_t* off, const float* in,
                          float* sums) {
  constexpr int kTaps = 9;
  typedef float G __attribute__((vector_size(kDepthwiseGroup * sizeof(float))));
  for (int t = 0; t < kTaps; ++t) {
    G total;
    for (int l = 0; l < kLanes; ++l) {
      G acc = {};
      for (int64_t q = l; q < n; q += kLanes) {
        G av, v;
        __builtin_memcpy(&av, a + q * kDepthwiseGroup, sizeof av);
        __builtin_memcpy(&v, in + (q + off[t]) * kDepthwiseGroup, sizeof v);
        acc += av * v;
      }
      if (l == 0)
        total = acc;
      else
        total += acc;
    }
    G s;
    __builtin_memcpy(&s, sums + t * kDepthwiseGroup, sizeof s);
    s += total;
    __builtin_memcpy(sums + t * kDepthwiseGroup, &s, sizeof s);
  }
}

// ---- Max pooling, 2x2 windows of stride 2 ----
//
// A vector of L elements (floats, or the int32 accumulators of the int8 path) of a row holds
// L / 2 windows' upper (a, b) or lower (c, d) pairs. The maximum is taken in the scalar kernel's
// order (pool_walk.h): b over a, then c, then d, each only when strictly greater, so that ties,
// -0 against 0 and NaNs come out the same bit for bit. A row's last vector overlaps the one
// before. L is kLanes, or half of it on 16 lanes for rows of 4 to 7 windows (LeNet-5's 10-wide
// second convolution), which would otherwise fall to scalars; rows of fewer windows than half a
// vector run the same selects on scalars.

template <int L, class T>
struct VectorOf {
  typedef T type __attribute__((vector_size(L * sizeof(T))));
};
template <int L, class T>
using VTn = typename VectorOf<L, T>::type;
template <int L>
using VIn = VTn<L, int>;

template <class T>
ZT_INLINE T later_if_greater(T earlier, T later) {
  return later > earlier ? later : earlier;
}

// Lane i takes lane from(i).
template <int L, class F>
ZT_INLINE VIn<L> lane_map(F from) {
  VIn<L> m;
  for (int i = 0; i < L; ++i) m[i] = from(i);
  return m;
}

// Lanes of a (then b, from L on) in the order of m: GCC's __builtin_shuffle. Clang's
// shufflevector takes constant indices only, so there a loop (Clang builds: the fuzzers).
template <class T, class M>
ZT_INLINE T permute(T a, M m) {
#if defined(__clang__)
  T out;
  for (int i = 0; i < static_cast<int>(sizeof m / sizeof m[0]); ++i) out[i] = a[m[i]];
  return out;
#else
  return __builtin_shuffle(a, m);
#endif
}

template <class T, class M>
ZT_INLINE T permute(T a, T b, M m) {
#if defined(__clang__)
  constexpr int n = sizeof m / sizeof m[0];
  T out;
  for (int i = 0; i < n; ++i) out[i] = m[i] < n ? a[m[i]] : b[m[i] - n];
  return out;
#else
  return __builtin_shuffle(a, b, m);
#endif
}

// The lanes a row of out_w windows takes: kLanes, or half of them on 16 lanes for rows too
// narrow for a whole vector.
constexpr bool half_vectors(int64_t out_w) {
  return kLanes == 16 && out_w < kLanes / 2;
}

// With kRange (int32 only), also returns range_bits of every element it reads: all of x when
// in_h and in_w are even.
template <class T, bool kRange, int L>
int max_pool_2x2_lanes(const Pool2dGeometry& g, int64_t planes, const T* x, T* y) {
  typedef VTn<L, T> VT;
  static_assert(sizeof(T) == sizeof(int), "lane maps are int vectors");
  constexpr int64_t kWindows = L / 2;
  const VIn<L> swap = lane_map<L>([](int i) { return i ^ 1; });         // b <-> a, d <-> c
  const VIn<L> evens = lane_map<L>([](int i) { return (2 * i) % L; });  // results to the front
  // The sizes are copied out of g, which the byte-wise stores could alias.
  const int64_t in_w = g.in_w, in_plane = g.in_plane(), out_h = g.out_h, out_w = g.out_w;
  T lo = 0, hi = 0;
  VT vlo = {}, vhi = {};
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < out_h; ++oh) {
      const T* r0 = x + p * in_plane + 2 * oh * in_w;
      const T* r1 = r0 + in_w;
      T* yr = y + (p * out_h + oh) * out_w;
      if (out_w < kWindows) {
        for (int64_t ow = 0; ow < out_w; ++ow) {
          const T ab = later_if_greater(r0[2 * ow], r0[2 * ow + 1]);
          yr[ow] = later_if_greater(later_if_greater(ab, r1[2 * ow]), r1[2 * ow + 1]);
          if constexpr (kRange) {
            // Named one by one: GCC 12's Debug sanitized build read (i < 2 ? r0 : r1)[2 ow + i % 2]
            // as r1[2 ow + 1] for i = 2, losing the window's bottom-left value from the range.
            const T window[4] = {r0[2 * ow], r0[2 * ow + 1], r1[2 * ow], r1[2 * ow + 1]};
            for (const T v : window) lo = v < lo ? v : lo, hi = v > hi ? v : hi;
          }
        }
        continue;
      }
      for (int64_t ow = 0; ow < out_w; ow += kWindows) {
        const int64_t at = ow + kWindows <= out_w ? ow : out_w - kWindows;
        VT top, bottom;
        __builtin_memcpy(&top, r0 + 2 * at, sizeof top);
        __builtin_memcpy(&bottom, r1 + 2 * at, sizeof bottom);
        const VT ab = later_if_greater(top, permute(top, swap));
        const VT abcd = later_if_greater(later_if_greater(ab, bottom), permute(bottom, swap));
        const VT packed = permute(abcd, evens);
        __builtin_memcpy(yr + at, &packed, kWindows * sizeof(T));
        if constexpr (kRange) {
          vlo = top < vlo ? top : vlo, vlo = bottom < vlo ? bottom : vlo;
          vhi = top > vhi ? top : vhi, vhi = bottom > vhi ? bottom : vhi;
        }
      }
    }
  if constexpr (!kRange) return 0;
  for (int i = 0; i < L; ++i) lo = vlo[i] < lo ? vlo[i] : lo, hi = vhi[i] > hi ? vhi[i] : hi;
  const int64_t neg = -static_cast<int64_t>(lo);
  const auto m = static_cast<unsigned long long>(hi > neg ? hi : neg);
  return m ? 64 - __builtin_clzll(m) : 0;  // std::bit_width, which this file may not include
}

template <class T, bool kRange = false>
int max_pool_2x2_of(const Pool2dGeometry& g, int64_t planes, const T* x, T* y) {
  if (half_vectors(g.out_w)) return max_pool_2x2_lanes<T, kRange, kLanes / 2>(g, planes, x, y);
  return max_pool_2x2_lanes<T, kRange, kLanes>(g, planes, x, y);
}

void max_pool_2x2(const Pool2dGeometry& g, int64_t planes, const float* x, float* y) {
  max_pool_2x2_of(g, planes, x, y);
}

int max_pool_2x2_s32(const Pool2dGeometry& g, int64_t planes, const int32_t* x, int32_t* y,
                     bool range) {
  if (!range) return max_pool_2x2_of<int32_t>(g, planes, x, y);
  return max_pool_2x2_of<int32_t, true>(g, planes, x, y);
}

// The backward of a ReLU (output x, cap) and the 2x2 max pooling after it, in one pass: a
// window's dy goes to its first maximum in scan order (the order above) where that maximum lies
// in (0, cap), +0 everywhere else, including the odd last row and column. Selects on masks, so
// no branches.

// Masks as all-ones or zero integers, for scalars (from a bool) as for vectors.
ZT_INLINE int as_mask(bool b) {
  return -static_cast<int>(b);
}
template <class M>
ZT_INLINE M as_mask(M m) {
  return m;
}

// Which of the window a, b (upper row), c, d (lower row) takes dy, and the dy it takes.
template <class T>
struct Routing {
  decltype(as_mask(T{} > T{})) a, b, c, d;
  T dy;
};
template <class T>
ZT_INLINE Routing<T> route(T a, T b, T c, T d, T dy, T cap) {
  const auto to_b = as_mask(b > a);
  const T ab = to_b ? b : a;
  const auto to_c = as_mask(c > ab);
  const T abc = to_c ? c : ab;
  const auto to_d = as_mask(d > abc);
  const T v = to_d ? d : abc;
  const auto passes = as_mask(v > T{}) & as_mask(v < cap);
  return {~(to_b | to_c | to_d), to_b & ~(to_c | to_d), to_c & ~to_d, to_d, passes ? dy : T{}};
}

// The vectors as in max_pool_2x2_lanes: each window's routing is worked out on its even lane and
// spread to the pair.
template <int L>
void max_pool_2x2_backward_relu_lanes(const Pool2dGeometry& g, int64_t planes, const float* x,
                                      const float* dy, float* dx, float cap) {
  typedef VTn<L, float> VF;
  constexpr int64_t kWindows = L / 2;
  const VIn<L> swap = lane_map<L>([](int i) { return i ^ 1; });
  const VIn<L> dup_window =
      lane_map<L>([](int i) { return i / 2; });  // dy of window w to 2w, 2w + 1
  const VIn<L> dup_even = lane_map<L>([](int i) { return i & ~1; });  // lane 2w to 2w + 1
  // Lane 2w from the first vector's lane 2w, lane 2w + 1 from the second's lane 2w.
  const VIn<L> left_right = lane_map<L>([](int i) { return i % 2 == 0 ? i : L + i - 1; });
  const VF zero = {}, caps = cap - VF{};
  const int64_t in_w = g.in_w, in_plane = g.in_plane(), out_h = g.out_h, out_w = g.out_w;
  for (int64_t p = 0; p < planes; ++p) {
    float* dxp = dx + p * in_plane;
    for (int64_t oh = 0; oh < out_h; ++oh) {
      const float* r0 = x + p * in_plane + 2 * oh * in_w;
      const float* r1 = r0 + in_w;
      const float* dyr = dy + (p * out_h + oh) * out_w;
      float* d0 = dxp + 2 * oh * in_w;
      float* d1 = d0 + in_w;
      if (out_w < kWindows) {
        for (int64_t ow = 0, e = 0; ow < out_w; ++ow, e += 2) {
          const Routing<float> r = route(r0[e], r0[e + 1], r1[e], r1[e + 1], dyr[ow], cap);
          d0[e] = r.a ? r.dy : 0.0f, d0[e + 1] = r.b ? r.dy : 0.0f;
          d1[e] = r.c ? r.dy : 0.0f, d1[e + 1] = r.d ? r.dy : 0.0f;
        }
      } else {
        for (int64_t ow = 0; ow < out_w; ow += kWindows) {
          const int64_t at = ow + kWindows <= out_w ? ow : out_w - kWindows;
          VF top, bottom, grads = {};
          __builtin_memcpy(&top, r0 + 2 * at, sizeof top);
          __builtin_memcpy(&bottom, r1 + 2 * at, sizeof bottom);
          __builtin_memcpy(&grads, dyr + at, kWindows * sizeof(float));
          const Routing<VF> r = route(top, permute(top, swap), bottom, permute(bottom, swap),
                                      permute(grads, dup_window), caps);
          const VF routed = permute(r.dy, dup_even);
          const VF top_dx = permute(r.a, r.b, left_right) ? routed : zero;
          const VF bottom_dx = permute(r.c, r.d, left_right) ? routed : zero;
          __builtin_memcpy(d0 + 2 * at, &top_dx, sizeof top_dx);
          __builtin_memcpy(d1 + 2 * at, &bottom_dx, sizeof bottom_dx);
        }
      }
      if (in_w > 2 * out_w) d0[in_w - 1] = d1[in_w - 1] = 0.0f;
    }
    if (g.in_h > 2 * out_h)
      for (int64_t i = 0; i < in_w; ++i) dxp[(g.in_h - 1) * in_w + i] = 0.0f;
  }
}

void max_pool_2x2_backward_relu(const Pool2dGeometry& g, int64_t planes, const float* x,
                                const float* dy, float* dx, float cap) {
  if (half_vectors(g.out_w))
    return max_pool_2x2_backward_relu_lanes<kLanes / 2>(g, planes, x, dy, dx, cap);
  max_pool_2x2_backward_relu_lanes<kLanes>(g, planes, x, dy, dx, cap);
}

}  // namespace zotrain::kernels::ZT_SIMD_NS

#if defined(ZT_SIMD_TARGET)
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#undef ZT_SIMD_PRAGMA
#undef ZT_SIMD_PUSH_TARGET
#undef ZT_SIMD_PUSH_CLANG
#endif

#undef ZT_INLINE
