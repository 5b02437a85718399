// Integer batch normalization (ours: NITI's networks have none, and without it PointNet's deep
// stack of 1x1 convolutions trains to 56 % on the integer path). Each channel is centred on its
// mean and divided by the power of two nearest its standard deviation, so forward and backward
// are integer sums and shifts. There is no affine part: the layer after it has no bias either
// (NITI's layers have none), and a scale would only move the per-tensor exponent.
//
// Because the divisor is a power of two chosen from the variance, it is constant almost
// everywhere as a function of x; the exact gradient then has no variance term:
// dx = 2^-k (dy - mean(dy)), per channel. With ctx.fixed_norm the divisor is the deviation itself,
// a fixed-point multiplier of the power of two (a small change of the statistics then moves a
// channel's scale a little, not by 2x at once); the gradient takes it as a constant alike.
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
constexpr int kMultBits = 12;     // fraction bits of a fixed divisor's multiplier (fixed_norm)
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

// The variance of `count` int8 values of sum `sum` and sum of squares `squares`, with 2 kMeanBits
// fraction bits, as the power-of-two divisor takes it: the mean square less the square of
// `mean`, the mean rounded to kMeanBits. Its error (2 |mean| 2^-9 in units of the variance) only
// matters where it moves the nearest power of two.
int64_t rounded_variance(int64_t squares, int64_t mean, int64_t count) {
  return std::max<int64_t>(round_div(squares * (int64_t{1} << 2 * kMeanBits), count) - mean * mean,
                           0);
}

// The same exactly: (squares · count - sum^2) / count^2, rounded once. A fixed divisor needs
// every bit (a channel of mean 30 and deviation 0.8 had its rounded variance 4 % off).
int64_t exact_variance(int64_t sum, int64_t squares, int64_t count) {
  const int64_t spread = squares * count - sum * sum;  // < 2^14 count^2
  return round_div((spread / count) * (int64_t{1} << 2 * kMeanBits) +
                       round_div((spread % count) * (int64_t{1} << 2 * kMeanBits), count),
                   count);
}

// round(sqrt(2^e / v)) for v > 0, 0 <= e <= 56, a result below 2^(kMultBits + 2): the integer
// m with (2m - 1)^2 v <= 2^(e + 2) < (2m + 1)^2 v, by bisection.
// (Products below 2^61: no 128-bit type, which 32-bit targets lack.)
int32_t inverse_sqrt(int64_t v, int e) {
  const uint64_t target = uint64_t{1} << (e + 2);
  int32_t lo = 0, hi = int32_t{1} << (kMultBits + 2);  // (2 lo - 1)^2 v <= target < (2 hi + 1)^2 v
  while (lo < hi) {
    const int32_t m = (lo + hi + 1) / 2;
    const auto odd = static_cast<uint64_t>(2 * m - 1);
    if (odd * odd * static_cast<uint64_t>(v) <= target)
      lo = m;
    else
      hi = m - 1;
  }
  return lo;
}

// One channel's normalization in units of the input's mantissa: y = (m - mean / 2^kMeanBits) /
// 2^shift, and with fixed_norm times mult / 2^kMultBits (2^shift / the deviation, in [2^-1/2,
// 2^1/2]).
struct ChannelNorm {
  int32_t mean;
  int32_t shift;
  int32_t mult;
};

// A channel's norm from its variance v · 2^-2 kMeanBits · 2^k (in squared units of the input's
// mantissa): the mean as given, the power of two nearest the deviation in the log domain
// (floor(log2(var) / 2 + 1/2)) and the multiplier that makes it the deviation; shift kConstant
// and multiplier 1 for a constant channel (v = 0).
ChannelNorm channel_norm(int32_t mean, int64_t v, int k) {
  if (v <= 0) return {mean, kConstant, 1 << kMultBits};
  const int64_t half = floor_half(bit_length(v) + k);  // the shift in units of 2^-kMeanBits
  return {mean, static_cast<int32_t>(half - kMeanBits),
          inverse_sqrt(v, static_cast<int>(2 * (half + kMultBits) - k))};
}

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
        const int64_t var = ctx.fixed_norm ? exact_variance(sum, squares, count)
                                           : rounded_variance(squares, mean, count);
        norm[c] = channel_norm(static_cast<int32_t>(mean), var, 0);
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
    for (int64_t c = 0; c < channels_; ++c)
      // The mean at most twice the largest an int8 input can have, so the centred values fit
      // int32; the variance in the input's units without scaling it (k = 2d + ...).
      norm[c] = channel_norm(
          static_cast<int32_t>(scale_pow2(run.mean(c), d, int64_t{1} << (kMeanBits + 8))),
          run.var(c), 2 * d + 2 * kMeanBits - kVarBits);
    return aligned_top(norm);
  }

  // The largest shift; shifts more than kMaxSpread below it are raised to that distance (and
  // their multiplier to 1), so that every channel's values fit int32 once aligned to it. A
  // constant channel is all zeros once centred, whatever its shift; it takes the largest, so that
  // its error is scaled like the widest channel's (its gradient is not defined: any spread makes
  // it a channel of ±1).
  int aligned_top(ChannelNorm* norm) const {
    int top = kConstant;
    for (int64_t c = 0; c < channels_; ++c) top = std::max(top, static_cast<int>(norm[c].shift));
    if (top == kConstant) top = 0;
    for (int64_t c = 0; c < channels_; ++c) {
      ChannelNorm& n = norm[c];
      if (n.shift == kConstant || n.shift < top - kMaxSpread)
        n = {n.mean, n.shift == kConstant ? top : top - kMaxSpread, 1 << kMultBits};
    }
    return top;
  }

  // out = (v · 2^kMeanBits - mean) · 2^(top - shift) per channel (with ctx.fixed_norm times
  // mult / 2^kMultBits, rounded), brought to int8 with one shift for the tensor (returned):
  // |v · 2^kMeanBits - mean| < 2^17, top - shift <= kMaxSpread and mult < 2^(kMultBits + 1/2),
  // so the values fit int32. The result's exponent is v's - kMeanBits - top (+ the returned
  // shift), in units of each channel's divisor.
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
              const int32_t mean = norm[c].mean;
              if (!ctx.fixed_norm) {
                for (int64_t i = 0; i < inner_; ++i)
                  a[i] = (p[i] * (int32_t{1} << kMeanBits) - mean) * (int32_t{1} << up);
                continue;
              }
              const int64_t mult = int64_t{norm[c].mult} << up,
                            half = int64_t{1} << (kMultBits - 1);
              for (int64_t i = 0; i < inner_; ++i) {  // rounded to nearest, halves away from 0
                const int64_t t = (p[i] * (int32_t{1} << kMeanBits) - mean) * mult;
                a[i] = static_cast<int32_t>(t >= 0 ? (t + half) >> kMultBits
                                                   : -((half - t) >> kMultBits));
              }
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
