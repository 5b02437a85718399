// Convolution. The forward pass and, for stride 1, the weight gradient run the register-tiled
// kernels of the active instruction set, which read the image in place of a patch matrix; the
// input gradient is a forward pass too for stride 1. Other strides go through patch matrices
// (im2col, col2im) and gemm_f32. A convolution of one channel to one (a depthwise group) would
// fill all but one of the tiles' channel rows or columns with zeros: 3x3 windows at stride 1 or 2
// (MobileNetV2's) run vector loops over a phase layout of the plane instead, other shapes direct
// loops.
#include "kernels/conv2d.h"

#include <algorithm>

#include "conv_walk.h"
#include "kernel_set.h"
#include "kernels/gemm.h"
#include "target_clones.h"

namespace zotrain::kernels {

namespace {

// The largest scratch of a kernel over the instruction sets compiled in, so that a workspace
// sized once serves whichever set is active.
int64_t work_any_isa(int64_t (*KernelSet::*work)(const Conv2dGeometry&), const Conv2dGeometry& g) {
  int64_t floats = 0;
  for (const KernelSet* set : compiled_kernel_sets()) floats = std::max(floats, (set->*work)(g));
  return floats;
}

bool single_channel(const Conv2dGeometry& g) {
  return g.in_c == 1 && g.out_c == 1;
}

// The single-channel kernels, one image at a time, walk the k * k taps (walk_runs, with the
// patch-matrix row co / plane as the tap) and, per tap and output row, the outputs whose input
// lies inside the image: every output sums its bias and then its taps in order. Stride 1 has
// loops of its own so that the compiler sees contiguous rows and vectorizes them.
void single_channel_forward(const Conv2dGeometry& g, const float* x, const float* w, float b,
                            float* y) {
  const int64_t plane = g.out_plane();
  std::fill(y, y + plane, b);
  walk_runs(g, [&](int64_t co, int64_t xo, int64_t lo, int64_t hi) {
    const float wt = w[co / plane];
    float* __restrict yr = y + co % plane;
    const float* __restrict xr = x + xo;
    if (g.stride == 1)
      for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wt * xr[ow];
    else
      for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wt * xr[ow * g.stride];
  });
}

void single_channel_backward_data(const Conv2dGeometry& g, const float* dy, const float* w,
                                  float* dx) {
  const int64_t plane = g.out_plane();
  std::fill(dx, dx + g.in_numel(), 0.0f);
  walk_runs(g, [&](int64_t co, int64_t xo, int64_t lo, int64_t hi) {
    const float wt = w[co / plane];
    const float* __restrict d = dy + co % plane;
    float* __restrict xr = dx + xo;
    if (g.stride == 1)
      for (int64_t ow = lo; ow < hi; ++ow) xr[ow] += wt * d[ow];
    else
      for (int64_t ow = lo; ow < hi; ++ow) xr[ow * g.stride] += wt * d[ow];
  });
}

// Each run's products are summed in eight interleaved parts (vectorizable, as add_plane_sums)
// and added to its tap.
void single_channel_backward_weight(const Conv2dGeometry& g, const float* x, const float* dy,
                                    float* dw) {
  constexpr int kParts = 8;
  const int64_t plane = g.out_plane();
  walk_runs(g, [&](int64_t co, int64_t xo, int64_t lo, int64_t hi) {
    const float* d = dy + co % plane;
    const float* xr = x + xo;
    float part[kParts] = {};
    const int64_t whole = lo + (hi - lo) / kParts * kParts;
    if (g.stride == 1)
      for (int64_t ow = lo; ow < whole; ow += kParts)
        for (int j = 0; j < kParts; ++j) part[j] += d[ow + j] * xr[ow + j];
    else
      for (int64_t ow = lo; ow < whole; ow += kParts)
        for (int j = 0; j < kParts; ++j) part[j] += d[ow + j] * xr[(ow + j) * g.stride];
    for (int64_t ow = whole; ow < hi; ++ow) part[ow - whole] += d[ow] * xr[ow * g.stride];
    float sum = part[0];
    for (int j = 1; j < kParts; ++j) sum += part[j];
    dw[co / plane] += sum;
  });
}

// ---- Depthwise 3x3, stride 1 or 2 ----
//
// The padded plane (hp x wp) is split by the parity of its rows and of its columns into
// stride^2 phase planes of hq x wq, hq = ceil(hp / stride), wq = ceil(wp / stride) (stride 1:
// one phase, the padded plane). The input of tap (ki, kj) for output (oh, ow) then lies in phase
// (ki % stride, kj % stride) at row oh + ki / stride, column ow + kj / stride: with the outputs
// laid out at the row pitch wq, every tap is one offset, and whole planes run as the vector loops
// tap_sums and tap_dots (kernel_set.h). Each output row is followed by wq - out_w >= 2 / stride
// dropped columns, which the gradients keep at zero: reading back at most 2 / stride rows or
// columns from any position then reads a zero or a real value, never another row's output.

bool depthwise3x3(const Conv2dGeometry& g) {
  return single_channel(g) && g.k == 3 && (g.stride == 1 || g.stride == 2);
}

struct PhaseLayout {
  explicit PhaseLayout(const Conv2dGeometry& g)
      : sh(g.stride - 1),
        wq((g.in_w + 2 * g.pad + sh) >> sh),
        pq(((g.in_h + 2 * g.pad + sh) >> sh) * wq),
        lead(2 * wq + 2) {}
  // Past the last phase (or plane of outputs): room for the loops' whole last vectors.
  static constexpr int64_t kSlack = 4 * kMaxLanes;
  int64_t sh;    // log2 of the stride: row or column r is index r >> sh of phase r & sh
  int64_t wq;    // the phases' row pitch
  int64_t pq;    // floats per phase
  int64_t lead;  // zeros in front of dy, which backward data reads back from
  int64_t phases_floats() const { return (pq << 2 * sh) + kSlack; }
  int64_t dy_floats() const { return lead + pq + kSlack; }
  // Where padded pixel (r, c) lies in the phases.
  int64_t at(int64_t r, int64_t c) const {
    return (((r & sh) << sh) + (c & sh)) * pq + (r >> sh) * wq + (c >> sh);
  }
};

int64_t depthwise3x3_work(const Conv2dGeometry& g) {
  const PhaseLayout d(g);
  return 2 * d.phases_floats() + d.dy_floats();
}

// Tap (ki, kj) of the forward pass reads phases[at(oh, ow) + off[3 ki + kj]].
void forward_offsets(const PhaseLayout& d, int64_t* off) {
  for (int64_t ki = 0; ki < 3; ++ki)
    for (int64_t kj = 0; kj < 3; ++kj) off[ki * 3 + kj] = d.at(ki, kj);
}

// Walks the image's pixels as runs of one row and column phase: calls run(po, xo, j0, j1), where
// phases[po + j] is pixel x[xo + j * stride] for j in [j0, j1). The runs are contiguous in the
// phases (and, at stride 1, in the image), so that the copies below vectorize.
template <typename Run>
void walk_phase_runs(const Conv2dGeometry& g, const PhaseLayout& d, Run run) {
  for (int64_t ih = 0; ih < g.in_h; ++ih)
    for (int64_t pc = 0; pc <= d.sh; ++pc) {
      // Padded column c = j * stride + pc is image column c - pad, inside for j in [j0, j1).
      const int64_t j0 = (g.pad - pc + d.sh) >> d.sh;
      const int64_t j1 = (g.in_w + g.pad - pc + d.sh) >> d.sh;
      run(d.at(ih + g.pad, pc), ih * g.in_w + pc - g.pad, j0, j1);
    }
}

// The plane x, padded, as phases (zeros up to phases_floats()).
void to_phases(const Conv2dGeometry& g, const PhaseLayout& d, const float* x, float* phases) {
  std::fill(phases, phases + d.phases_floats(), 0.0f);
  walk_phase_runs(g, d, [&](int64_t po, int64_t xo, int64_t j0, int64_t j1) {
    // Constant strides, so that the compiler vectorizes both copies.
    if (d.sh == 0)
      std::copy(x + (xo + j0), x + (xo + j1), phases + po + j0);
    else
      for (int64_t j = j0; j < j1; ++j) phases[po + j] = x[xo + 2 * j];
  });
}

// The plane dy at the row pitch wq after `lead` zeros, zeros in the dropped columns and up to
// dy_floats(); returns where dy starts.
float* dy_at_pitch(const Conv2dGeometry& g, const PhaseLayout& d, const float* dy, float* buf) {
  std::fill(buf, buf + d.dy_floats(), 0.0f);
  float* out = buf + d.lead;
  for (int64_t oh = 0; oh < g.out_h; ++oh)
    std::copy(dy + oh * g.out_w, dy + (oh + 1) * g.out_w, out + oh * d.wq);
  return out;
}

void depthwise3x3_forward(const Conv2dGeometry& g, const float* x, const float* w, float b,
                          float* y, float* work) {
  const PhaseLayout d(g);
  float* phases = work;
  float* out = work + d.phases_floats();  // the outputs at the row pitch wq
  to_phases(g, d, x, phases);
  int64_t off[9];
  forward_offsets(d, off);
  active_kernels().tap_sums(g.out_h * d.wq, 9, w, off, b, phases, out);
  for (int64_t oh = 0; oh < g.out_h; ++oh)
    std::copy(out + oh * d.wq, out + oh * d.wq + g.out_w, y + oh * g.out_w);
}

// Planes of at most kGroupedPlane outputs: kDepthwiseGroup channels of an image at a time, each
// position's channels side by side (tap_sums_interleaved), so that a vector holds one position
// of several channels rather than most of one small plane, and one call covers them all.
constexpr int64_t kGroupedPlane = 64;

bool depthwise3x3_grouped(const Conv2dGeometry& g) {
  return depthwise3x3(g) && g.out_plane() <= kGroupedPlane;
}

// Forward: phases and outputs; backward data: phases and dy at the row pitch, interleaved.
int64_t depthwise3x3_grouped_work(const Conv2dGeometry& g) {
  const PhaseLayout d(g);
  return (d.phases_floats() + std::max(g.out_h * d.wq, d.dy_floats())) * kDepthwiseGroup;
}

// x's phases for kDepthwiseGroup channels of an image, interleaved, up to the positions the taps
// of outputs [0, n) read; lanes past the last channel repeat it (their weights are zero and their
// results unread). Returns the offsets of the 9 taps (forward_offsets).
void interleaved_phases(const Conv2dGeometry& g, const PhaseLayout& d, int64_t channels,
                        const float* x, float* phases, int64_t* off) {
  constexpr int64_t kGroup = kDepthwiseGroup;
  forward_offsets(d, off);
  const int64_t reach = g.out_h * d.wq + *std::max_element(off, off + 9);
  std::fill(phases, phases + reach * kGroup, 0.0f);
  int64_t lane_at[kGroup];
  for (int64_t c = 0; c < kGroup; ++c) lane_at[c] = std::min(c, channels - 1) * g.in_numel();
  walk_phase_runs(g, d, [&](int64_t po, int64_t xo, int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      const float* xj = x + xo + j * g.stride;
      float* p = phases + (po + j) * kGroup;
      for (int64_t c = 0; c < kGroup; ++c) p[c] = xj[lane_at[c]];
    }
  });
}

// dy of kDepthwiseGroup channels of an image, interleaved at the row pitch wq after `lead` zero
// positions, zeros in the dropped columns and up to lead + pq positions; lanes past the last
// channel repeat it (their results are unread). Returns where dy starts.
const float* interleaved_dy(const Conv2dGeometry& g, const PhaseLayout& d, int64_t channels,
                            const float* dy, int64_t lead, float* buf) {
  constexpr int64_t kGroup = kDepthwiseGroup;
  std::fill(buf, buf + (lead + d.pq) * kGroup, 0.0f);
  float* at = buf + lead * kGroup;
  int64_t lane_at[kGroup];
  for (int64_t c = 0; c < kGroup; ++c) lane_at[c] = std::min(c, channels - 1) * g.out_numel();
  for (int64_t oh = 0; oh < g.out_h; ++oh)
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      float* p = at + (oh * d.wq + ow) * kGroup;
      for (int64_t c = 0; c < kGroup; ++c) p[c] = dy[lane_at[c] + oh * g.out_w + ow];
    }
  return at;
}

void depthwise3x3_forward_grouped(const Conv2dGeometry& g, int64_t channels, const float* x,
                                  const float* w, const float* b, float* y, float* work) {
  constexpr int64_t kGroup = kDepthwiseGroup;
  const PhaseLayout d(g);
  const int64_t n = g.out_h * d.wq;
  float* phases = work;                            // [reach][kGroup]
  float* out = work + d.phases_floats() * kGroup;  // [n][kGroup]
  int64_t off[9];
  interleaved_phases(g, d, channels, x, phases, off);
  float wt[9 * kGroup] = {}, init[kGroup] = {};
  for (int64_t c = 0; c < channels; ++c) {
    for (int t = 0; t < 9; ++t) wt[t * kGroup + c] = w[c * 9 + t];
    init[c] = b ? b[c] : 0.0f;
  }
  active_kernels().tap_sums_interleaved(n, 9, wt, off, init, phases, out);
  for (int64_t oh = 0; oh < g.out_h; ++oh)
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      const float* o = out + (oh * d.wq + ow) * kGroup;
      for (int64_t c = 0; c < channels; ++c) y[c * g.out_numel() + oh * g.out_w + ow] = o[c];
    }
}

// Each phase of the padded dx gathers the taps of its parity: padded pixel (r, c) of phase
// (r % stride, c % stride) takes w[ki][kj] dy[oh][ow] for r = stride oh + ki, c = stride ow + kj,
// that is dy at (r / stride - ki / stride, c / stride - kj / stride), a fixed offset back.
void depthwise3x3_backward_data(const Conv2dGeometry& g, const float* dy, const float* w, float* dx,
                                float* work) {
  const PhaseLayout d(g);
  float* phases = work;
  const float* dyp = dy_at_pitch(g, d, dy, work + d.phases_floats());
  // Phases in increasing order: each one's last vector spills into the next, which overwrites it.
  for (int64_t pr = 0; pr <= d.sh; ++pr)
    for (int64_t pc = 0; pc <= d.sh; ++pc) {
      float wt[9];
      int64_t off[9];
      int taps = 0;
      for (int64_t ki = pr; ki < 3; ki += d.sh + 1)
        for (int64_t kj = pc; kj < 3; kj += d.sh + 1, ++taps) {
          wt[taps] = w[ki * 3 + kj];
          off[taps] = -((ki >> d.sh) * d.wq + (kj >> d.sh));
        }
      active_kernels().tap_sums(d.pq, taps, wt, off, 0.0f, dyp,
                                phases + ((pr << d.sh) + pc) * d.pq);
    }
  walk_phase_runs(g, d, [&](int64_t po, int64_t xo, int64_t j0, int64_t j1) {
    if (d.sh == 0)
      std::copy(phases + po + j0, phases + po + j1, dx + (xo + j0));
    else
      for (int64_t j = j0; j < j1; ++j) dx[xo + 2 * j] = phases[po + j];
  });
}

// depthwise3x3_backward_data of `channels` (<= kDepthwiseGroup) channels of an image, as the
// grouped forward: each phase's taps over the channels side by side, the same bits.
void depthwise3x3_backward_data_grouped(const Conv2dGeometry& g, int64_t channels, const float* dy,
                                        const float* w, float* dx, float* work) {
  constexpr int64_t kGroup = kDepthwiseGroup;
  const PhaseLayout d(g);
  float* phases = work;  // [phases][kGroup]
  // The taps read back at most `lead` positions.
  const float* dy_at =
      interleaved_dy(g, d, channels, dy, d.lead, work + d.phases_floats() * kGroup);
  const float zeros[kGroup] = {};
  for (int64_t pr = 0; pr <= d.sh; ++pr)
    for (int64_t pc = 0; pc <= d.sh; ++pc) {
      float wt[9 * kGroup] = {};
      int64_t off[9];
      int taps = 0;
      for (int64_t ki = pr; ki < 3; ki += d.sh + 1)
        for (int64_t kj = pc; kj < 3; kj += d.sh + 1, ++taps) {
          for (int64_t c = 0; c < channels; ++c) wt[taps * kGroup + c] = w[c * 9 + ki * 3 + kj];
          off[taps] = -((ki >> d.sh) * d.wq + (kj >> d.sh));
        }
      active_kernels().tap_sums_interleaved(d.pq, taps, wt, off, zeros, dy_at,
                                            phases + ((pr << d.sh) + pc) * d.pq * kGroup);
    }
  walk_phase_runs(g, d, [&](int64_t po, int64_t xo, int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      const float* p = phases + (po + j) * kGroup;
      for (int64_t c = 0; c < channels; ++c) dx[c * g.in_numel() + xo + j * g.stride] = p[c];
    }
  });
}

void depthwise3x3_backward_weight(const Conv2dGeometry& g, const float* x, const float* dy,
                                  float* dw, float* work) {
  const PhaseLayout d(g);
  float* phases = work;
  to_phases(g, d, x, phases);
  const float* dyp = dy_at_pitch(g, d, dy, work + d.phases_floats());
  int64_t off[9];
  forward_offsets(d, off);
  active_kernels().tap_dots(g.out_h * d.wq, dyp, off, phases, dw);
}

// depthwise3x3_backward_weight of `channels` (<= kDepthwiseGroup) channels of an image (dw: 9
// weights a channel), as the grouped forward, the same bits.
void depthwise3x3_backward_weight_grouped(const Conv2dGeometry& g, int64_t channels, const float* x,
                                          const float* dy, float* dw, float* work) {
  constexpr int64_t kGroup = kDepthwiseGroup;
  const PhaseLayout d(g);
  const int64_t n = g.out_h * d.wq;
  float* phases = work;  // [reach][kGroup]
  int64_t off[9];
  interleaved_phases(g, d, channels, x, phases, off);
  const float* dyp = interleaved_dy(g, d, channels, dy, 0, work + d.phases_floats() * kGroup);
  float sums[9 * kGroup] = {};
  for (int64_t c = 0; c < channels; ++c)
    for (int t = 0; t < 9; ++t) sums[t * kGroup + c] = dw[c * 9 + t];
  active_kernels().tap_dots_interleaved(n, dyp, off, phases, sums);
  for (int64_t c = 0; c < channels; ++c)
    for (int t = 0; t < 9; ++t) dw[c * 9 + t] = sums[t * kGroup + c];
}

// db[o] += the sum of channel o's planes over the images. Eight interleaved partial sums, added
// in order at the end, let the compiler vectorize the loop (a single running sum would be a
// chain of dependent additions; with AVX2 the eight are one vector) and depend on nothing but
// the plane size and image count.
ZT_CLONES void add_plane_sums(const Conv2dGeometry& g, int64_t o0, int64_t o1, int64_t images,
                              const float* dy, float* db) {
  constexpr int kParts = 8;
  const int64_t plane = g.out_plane(), whole = plane / kParts * kParts;
  for (int64_t o = o0; o < o1; ++o) {
    float part[kParts] = {};
    for (int64_t n = 0; n < images; ++n) {
      const float* d = dy + n * g.out_numel() + o * plane;
      for (int64_t p = 0; p < whole; p += kParts)
        for (int j = 0; j < kParts; ++j) part[j] += d[p + j];
      for (int64_t p = whole; p < plane; ++p) part[p - whole] += d[p];
    }
    float sum = part[0];
    for (int j = 1; j < kParts; ++j) sum += part[j];
    db[o] += sum;
  }
}

}  // namespace

Conv2dGeometry Conv2dGeometry::make(int64_t in_c, int64_t in_h, int64_t in_w, int64_t out_c,
                                    int64_t k, int64_t stride, int64_t pad) {
  Conv2dGeometry g{in_c, in_h, in_w, out_c, k, stride, pad};
  g.out_h = (in_h + 2 * pad - k) / stride + 1;
  g.out_w = (in_w + 2 * pad - k) / stride + 1;
  return g;
}

void im2col(const Conv2dGeometry& g, const float* x, float* col) {
  im2col_any(g, x, col);
}

void col2im_add(const Conv2dGeometry& g, const float* col, float* x) {
  col2im_add_any(g, col, x);
}

const char* conv2d_f32_kernel_name() {
  return active_kernels().conv2d_name;
}

int64_t conv2d_forward_work(const Conv2dGeometry& g) {
  if (depthwise3x3_grouped(g)) return depthwise3x3_grouped_work(g);
  if (depthwise3x3(g)) return depthwise3x3_work(g);
  if (single_channel(g)) return 0;
  return work_any_isa(&KernelSet::conv2d_forward_work, g);
}

int64_t conv2d_backward_data_work(const Conv2dGeometry& g) {
  if (depthwise3x3_grouped(g)) return depthwise3x3_grouped_work(g);
  if (depthwise3x3(g)) return depthwise3x3_work(g);
  if (single_channel(g)) return 0;
  if (backward_data_by_convolution(g))
    return weight_numel(g) + work_any_isa(&KernelSet::conv2d_forward_work, transposed(g));
  return g.col_floats();
}

int64_t conv2d_backward_weight_work(const Conv2dGeometry& g) {
  if (depthwise3x3_grouped(g)) return depthwise3x3_grouped_work(g);
  if (depthwise3x3(g)) return depthwise3x3_work(g);
  if (single_channel(g)) return 0;
  if (g.stride == 1) return work_any_isa(&KernelSet::conv2d_weight_grad_work, g);
  return g.col_floats() + weight_numel(g);
}

int64_t conv2d_forward_batch(const Conv2dGeometry& g) {
  const auto batch = active_kernels().conv2d_forward_batch;
  return single_channel(g) || !batch ? 0 : batch(g);
}

int64_t conv2d_backward_data_batch(const Conv2dGeometry& g) {
  if (single_channel(g) || !backward_data_by_convolution(g)) return 0;
  return conv2d_forward_batch(transposed(g));
}

int64_t conv2d_groups_per_call(const Conv2dGeometry& g) {
  return depthwise3x3_grouped(g) ? kDepthwiseGroup : 1;
}

void conv2d_forward_grouped(const Conv2dGeometry& g, int64_t groups, const float* x, const float* w,
                            const float* b, float* y, float* work) {
  if (depthwise3x3_grouped(g)) return depthwise3x3_forward_grouped(g, groups, x, w, b, y, work);
  for (int64_t j = 0; j < groups; ++j)
    conv2d_forward(g, 1, x + j * g.in_numel(), w + j * g.out_c * g.patch_size(),
                   b ? b + j * g.out_c : nullptr, y + j * g.out_numel(), work);
}

void conv2d_forward(const Conv2dGeometry& g, int64_t images, const float* x, const float* w,
                    const float* b, float* y, float* work) {
  if (!single_channel(g)) return active_kernels().conv2d_forward(g, images, x, w, b, y, work);
  for (int64_t n = 0; n < images; ++n) {
    const float* xn = x + n * g.in_numel();
    float* yn = y + n * g.out_numel();
    if (depthwise3x3(g))
      depthwise3x3_forward(g, xn, w, b ? *b : 0.0f, yn, work);
    else
      single_channel_forward(g, xn, w, b ? *b : 0.0f, yn);
  }
}

void conv2d_backward_data_grouped(const Conv2dGeometry& g, int64_t groups, const float* dy,
                                  const float* w, float* dx, float* work) {
  if (depthwise3x3_grouped(g))
    return depthwise3x3_backward_data_grouped(g, groups, dy, w, dx, work);
  for (int64_t j = 0; j < groups; ++j)
    conv2d_backward_data(g, 1, dy + j * g.out_numel(), w + j * g.out_c * g.patch_size(),
                         dx + j * g.in_numel(), work);
}

void conv2d_backward_weight_grouped(const Conv2dGeometry& g, int64_t groups, const float* x,
                                    const float* dy, float* dw, float* db, float* work) {
  if (!depthwise3x3_grouped(g)) {
    for (int64_t j = 0; j < groups; ++j)
      conv2d_backward_weight(g, 0, g.out_c, 1, x + j * g.in_numel(), dy + j * g.out_numel(),
                             dw + j * g.out_c * g.patch_size(), db ? db + j * g.out_c : nullptr,
                             work);
    return;
  }
  depthwise3x3_backward_weight_grouped(g, groups, x, dy, dw, work);
  for (int64_t j = 0; db && j < groups; ++j)
    add_plane_sums(g, 0, 1, 1, dy + j * g.out_numel(), db + j);
}

void conv2d_backward_data(const Conv2dGeometry& g, int64_t images, const float* dy, const float* w,
                          float* dx, float* work) {
  if (single_channel(g)) {
    for (int64_t n = 0; n < images; ++n) {
      const float* dyn = dy + n * g.out_numel();
      float* dxn = dx + n * g.in_numel();
      if (depthwise3x3(g))
        depthwise3x3_backward_data(g, dyn, w, dxn, work);
      else
        single_channel_backward_data(g, dyn, w, dxn);
    }
    return;
  }
  if (backward_data_by_convolution(g)) {
    float* flipped = work;
    flip_weights(g, w, flipped);
    conv2d_forward(transposed(g), images, dy, flipped, nullptr, dx, work + weight_numel(g));
    return;
  }
  // Other strides: the patch matrix of dx is w^T dy, added back to the pixels it came from.
  const int64_t plane = g.out_plane();
  for (int64_t n = 0; n < images; ++n) {
    const float* dyn = dy + n * g.out_numel();
    float* dxn = dx + n * g.in_numel();
    gemm_f32(true, false, g.patch_size(), plane, g.out_c, 1.0f, w, g.patch_size(), dyn, plane, 0.0f,
             work, plane);
    std::fill(dxn, dxn + g.in_numel(), 0.0f);
    col2im_add(g, work, dxn);
  }
}

// Stride 1 runs the kernel set's correlation of dy with x. Other strides accumulate dw^T +=
// im2col(x) dy^T in a transposed copy, so that each product is a GEMM whose many rows are the
// patch matrix, read in place, and whose few columns are the channels.
void conv2d_backward_weight(const Conv2dGeometry& g, int64_t o0, int64_t o1, int64_t images,
                            const float* x, const float* dy, float* dw, float* db, float* work) {
  const int64_t taps = g.patch_size(), plane = g.out_plane(), channels = o1 - o0;
  if (single_channel(g)) {
    for (int64_t n = 0; o0 < o1 && n < images; ++n) {
      const float* xn = x + n * g.in_numel();
      const float* dyn = dy + n * g.out_numel();
      if (depthwise3x3(g))
        depthwise3x3_backward_weight(g, xn, dyn, dw, work);
      else
        single_channel_backward_weight(g, xn, dyn, dw);
    }
  } else if (g.stride == 1) {
    active_kernels().conv2d_weight_grad(g, o0, o1, images, x, dy, dw, work);
  } else {
    float* col = work;
    float* dwt = work + g.col_floats();  // [taps, channels]
    for (int64_t o = 0; o < channels; ++o)
      for (int64_t t = 0; t < taps; ++t) dwt[t * channels + o] = dw[(o0 + o) * taps + t];
    for (int64_t n = 0; n < images; ++n) {
      im2col(g, x + n * g.in_numel(), col);
      gemm_f32(false, true, taps, channels, plane, 1.0f, col, plane,
               dy + n * g.out_numel() + o0 * plane, plane, 1.0f, dwt, channels);
    }
    for (int64_t o = 0; o < channels; ++o)
      for (int64_t t = 0; t < taps; ++t) dw[(o0 + o) * taps + t] = dwt[t * channels + o];
  }
  if (db) add_plane_sums(g, o0, o1, images, dy, db);
}

}  // namespace zotrain::kernels
