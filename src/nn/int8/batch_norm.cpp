// Integer batch normalization (ours: NITI's networks have none, and without it PointNet's deep
// stack of 1x1 convolutions trains to 56 % on the integer path). Each channel is centred on its
// mean and divided by the power of two nearest its standard deviation, so forward and backward
// are integer sums and shifts. There is no affine part: the layer after it has no bias either
// (NITI's layers have none), and a scale would only move the per-tensor exponent.
//
// Because the divisor is a power of two chosen from the variance, it is constant almost
// everywhere as a function of x; the exact gradient then has no variance term:
// dx = 2^-k (dy - mean(dy)), per channel.
//
// Training passes use the batch's statistics and, with ctx.update_stats, move the running ones
// (state) by 1/8 of the difference, or average them (ctx.average_stats, for statistics
// recomputed with fixed weights: QNetwork::average_stats); evaluation passes normalize by the
// running statistics.
#include <algorithm>

#include "kernels/int8.h"
#include "qlayers.h"
#include "zotrain/core/error.h"
#include "zotrain/core/thread_pool.h"

namespace zotrain::int8 {

namespace {

constexpr int kMeanBits = 8;      // fraction bits of a mean, in units of the input's mantissa
constexpr int kVarBits = 4;       // fraction bits of a running variance, in units of 2^(2 e_ref)
constexpr int kMaxSpread = 12;    // channels whose divisors lie further apart are scaled alike
constexpr int kMomentumBits = 3;  // running statistics move by 2^-3 of the difference
constexpr int32_t kConstant = -1000;  // the shift of a channel without spread (see aligned_top)
constexpr int32_t kStateLimit = (int32_t{1} << 24) - 1;  // exact in a float checkpoint tensor

int bit_length(int64_t v) {
  int b = 0;
  for (uint64_t u = static_cast<uint64_t>(v < 0 ? -v : v); u; u >>= 1) ++b;
  return b;
}

int64_t round_div(int64_t num, int64_t den) {  // to nearest, halves away from zero; den > 0
  return num >= 0 ? (num + den / 2) / den : -((-num + den / 2) / den);
}

int64_t floor_half(int64_t v) {  // floor(v / 2)
  return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

// x · 2^s for s of either sign (rounded to nearest when s < 0), saturated to ±limit.
int64_t scale_pow2(int64_t x, int s, int64_t limit) {
  if (x == 0) return 0;
  if (s < 0) return std::clamp(kernels::round_shift(x, std::min(-s, 62)), -limit, limit);
  for (int i = 0; i < s; ++i) {
    if (x > limit / 2 || x < -limit / 2) return x > 0 ? limit : -limit;
    x *= 2;
  }
  return std::clamp(x, -limit, limit);
}

// One channel's normalization in units of the input's mantissa: y = (m - mean / 2^kMeanBits) /
// 2^shift.
struct ChannelNorm {
  int32_t mean;
  int32_t shift;
};

// The running statistics: e_ref (the exponent of the input at the first update), the number of
// updates (saturating), then per channel the mean in units of 2^(e_ref - kMeanBits) and the
// variance in units of 2^(2 e_ref - kVarBits).
struct Running {
  int32_t* s;
  int64_t channels;
  int32_t& e_ref() const { return s[0]; }
  int32_t& updates() const { return s[1]; }
  int32_t& mean(int64_t c) const { return s[2 + c]; }
  int32_t& var(int64_t c) const { return s[2 + channels + c]; }
};

class BatchNorm : public QLayer {
 public:
  BatchNorm(int64_t channels, int64_t inner) : channels_(channels), inner_(inner) {}

  int64_t state_elems() const override { return 2 + 2 * channels_; }
  void init_state(int32_t* state) const override {
    // Mean 0 and variance 1 until the first update, as the f32 layer's.
    Running r{state, channels_};
    r.e_ref() = 0;
    r.updates() = 0;
    for (int64_t c = 0; c < channels_; ++c) r.mean(c) = 0, r.var(c) = 1 << kVarBits;
  }

  bool valid_state(const int32_t* state) const override {
    Running r{const_cast<int32_t*>(state), channels_};
    bool ok = r.e_ref() >= -64 && r.e_ref() <= 64 && r.updates() >= 0;
    for (int64_t c = 0; c < channels_; ++c) ok = ok && r.var(c) >= 0;
    return ok;
  }

  int64_t acc_elems(const Shape& x) const override { return x.row_numel(); }
  int64_t stage_elems(const Shape& x) const override { return x.numel(); }
  int64_t work_bytes(const Shape&) const override {
    return static_cast<int64_t>(sizeof(ChannelNorm)) * channels_;
  }

  void forward(const QTensor& x, QTensor& y, const QExecContext& ctx) const override {
    auto* norm = static_cast<ChannelNorm*>(ctx.work);
    const int top = ctx.training ? batch_norms(x, ctx, norm) : running_norms(x.exp, norm);
    const int s = normalize(x, norm, top, ctx, y.data);
    y.exp = -kMeanBits - top + s;
  }

  void backward(const QTensor& x, const QTensor&, const QTensor& dy, QTensor& dx, int64_t*,
                const QExecContext& ctx) const override {
    if (!dx.data) return;
    auto* norm = static_cast<ChannelNorm*>(ctx.work);
    QExecContext stats = ctx;
    stats.update_stats = false;
    const int top = batch_norms(x, stats, norm);
    // The same shifts, centred on dy's mean instead of x's.
    parallel_for(ctx.pool, channels_, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c)
        norm[c].mean = static_cast<int32_t>(round_div(
            channel_sum(dy.data, x.shape[0], c) * (int64_t{1} << kMeanBits), x.shape[0] * inner_));
    });
    const int s = normalize(dy, norm, top, ctx, dx.data);
    dx.exp = dy.exp - x.exp - kMeanBits - top + s;
  }

 private:
  int64_t channel_sum(const int8_t* v, int64_t rows, int64_t c) const {
    int64_t sum = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const int8_t* p = v + (r * channels_ + c) * inner_;
      for (int64_t i = 0; i < inner_; ++i) sum += p[i];
    }
    return sum;
  }

  // The move of a running statistic towards a batch's, `diff` away, after `updates` updates: the
  // first takes the batch's whole; then 1/8 of the way (an exponential average), or with
  // ctx.average_stats 1/(updates + 1) of it (the mean of the batches since the first).
  static int64_t step(int64_t diff, int64_t updates, const QExecContext& ctx) {
    if (updates == 0) return diff;
    return ctx.average_stats ? round_div(diff, updates + 1)
                             : kernels::round_shift(diff, kMomentumBits);
  }

  // Each channel's batch mean and shift (2^shift nearest its standard deviation); moves the
  // running statistics when the pass says so. Returns the largest shift.
  int batch_norms(const QTensor& x, const QExecContext& ctx, ChannelNorm* norm) const {
    const int64_t rows = x.shape[0], count = rows * inner_;
    const bool update = ctx.update_stats && state_;
    Running run{state_, channels_};
    const int e_ref = update && run.updates() == 0 ? x.exp : (state_ ? run.e_ref() : 0);
    parallel_for(ctx.pool, channels_, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        int64_t sum = 0, squares = 0;
        for (int64_t r = 0; r < rows; ++r) {
          const int8_t* p = x.data + (r * channels_ + c) * inner_;
          for (int64_t i = 0; i < inner_; ++i) sum += p[i], squares += p[i] * p[i];
        }
        // Mean and variance with kMeanBits and 2 kMeanBits fraction bits (|m| <= 127, so the
        // products stay far inside int64 for any batch that fits in memory).
        const int64_t mean = round_div(sum * (int64_t{1} << kMeanBits), count);
        const int64_t var = std::max<int64_t>(
            round_div(squares * (int64_t{1} << 2 * kMeanBits), count) - mean * mean, 0);
        norm[c] = {static_cast<int32_t>(mean), shift_of(var, 2 * kMeanBits)};
        if (!update) continue;
        // In the units of e_ref.
        const int d = x.exp - e_ref;
        const int64_t m = scale_pow2(mean, d, kStateLimit);
        const int64_t v = scale_pow2(var, 2 * d - (2 * kMeanBits - kVarBits), kStateLimit);
        run.mean(c) = static_cast<int32_t>(run.mean(c) + step(m - run.mean(c), run.updates(), ctx));
        run.var(c) = static_cast<int32_t>(run.var(c) + step(v - run.var(c), run.updates(), ctx));
      }
    });
    if (update) run.e_ref() = e_ref, run.updates() = std::min(run.updates() + 1, kStateLimit);
    return aligned_top(norm);
  }

  // The running statistics in units of an input with exponent `exp`. Returns the largest shift.
  int running_norms(int exp, ChannelNorm* norm) const {
    ZT_ASSERT(state_, "integer batch norm evaluated without its running statistics bound");
    Running run{state_, channels_};
    const int d = run.e_ref() - exp;
    for (int64_t c = 0; c < channels_; ++c) {
      // At most twice the largest mean an int8 input can have, so the centred values fit int32.
      norm[c].mean =
          static_cast<int32_t>(scale_pow2(run.mean(c), d, int64_t{1} << (kMeanBits + 8)));
      // A variance v · 2^(2d) has bit length bit_length(v) + 2d: the shift follows without
      // scaling v.
      norm[c].shift = run.var(c) > 0
                          ? static_cast<int32_t>(floor_half(bit_length(run.var(c)) + 2 * d +
                                                            2 * kMeanBits - kVarBits) -
                                                 kMeanBits)
                          : kConstant;
    }
    return aligned_top(norm);
  }

  // 2^shift nearest the standard deviation of a variance with `frac` fraction bits, in the
  // log domain: floor(log2(var) / 2 + 1/2) = floor(bit_length(var) / 2); kConstant for a
  // constant channel (variance 0).
  static int32_t shift_of(int64_t var, int frac) {
    return var > 0 ? static_cast<int32_t>(floor_half(bit_length(var)) - frac / 2) : kConstant;
  }

  // The largest shift; shifts more than kMaxSpread below it are raised to that distance, so
  // that every channel's values fit int32 once aligned to it. A constant channel is all zeros
  // once centred, whatever its shift; it takes the largest, so that its error is scaled like the
  // widest channel's (its gradient is not defined: any spread makes it a channel of ±1).
  int aligned_top(ChannelNorm* norm) const {
    int top = kConstant;
    for (int64_t c = 0; c < channels_; ++c) top = std::max(top, static_cast<int>(norm[c].shift));
    if (top == kConstant) top = 0;
    for (int64_t c = 0; c < channels_; ++c)
      norm[c].shift = norm[c].shift == kConstant
                          ? top
                          : std::max(norm[c].shift, static_cast<int32_t>(top - kMaxSpread));
    return top;
  }

  // out = (v · 2^kMeanBits - mean) · 2^(top - shift) per channel, brought to int8 with one
  // shift for the tensor (returned): |v · 2^kMeanBits - mean| < 2^17 and top - shift <=
  // kMaxSpread, so the values fit int32. The result's exponent is v's - kMeanBits - top (+ the
  // returned shift), in units of each channel's divisor.
  int normalize(const QTensor& v, const ChannelNorm* norm, int top, const QExecContext& ctx,
                int8_t* out) const {
    const int64_t width = channels_ * inner_;
    return requantize_rows(
        v.shape[0], width, 1, ctx, out, [&](int64_t r0, int64_t r1, int32_t* acc, void*) {
          for (int64_t r = r0; r < r1; ++r)
            for (int64_t c = 0; c < channels_; ++c) {
              const int8_t* p = v.data + (r * channels_ + c) * inner_;
              int32_t* a = acc + (r - r0) * width + c * inner_;
              const int up = top - norm[c].shift;
              for (int64_t i = 0; i < inner_; ++i)
                a[i] = (p[i] * (int32_t{1} << kMeanBits) - norm[c].mean) * (int32_t{1} << up);
            }
        });
  }

  int64_t channels_, inner_;
};

}  // namespace

std::unique_ptr<QLayer> make_batch_norm(const Shape& in) {
  return std::make_unique<BatchNorm>(in[1], in.rank > 2 ? in.row_numel() / in[1] : 1);
}

}  // namespace zotrain::int8
