#include "nn/batch_norm.h"

#include <algorithm>
#include <cmath>

#include "kernels/batch_norm.h"
#include "zotrain/core/error.h"

namespace zotrain {
namespace {

// Where channel c's values of a [N, C, ...] tensor lie: N runs of `inner` floats, `stride` apart.
struct ChannelLayout {
  int64_t n, inner, stride;
  int64_t count() const { return n * inner; }
  int64_t offset(int64_t c, int64_t b) const { return b * stride + c * inner; }
};

ChannelLayout layout(const Shape& s) {
  const int64_t inner = s.rank > 2 ? s.row_numel() / s[1] : 1;
  return {s[0], inner, s.row_numel()};
}

struct Stats {
  double mean, inv_std;
  double unbiased_var;  // what the running variance averages
};

// Mean, 1 / sqrt(variance + eps) and unbiased variance from the sums of a channel's values'
// deviations from `pivot` (its first value), in double: with a pivot among the values the
// variance sq / n - (sum / n)^2 keeps its precision.
Stats stats_from_sums(double sum, double sq, double count, float pivot) {
  const double shift = sum / count, var = std::max(sq / count - shift * shift, 0.0);
  return {pivot + shift, 1 / std::sqrt(var + BatchNorm::kEps),
          var * count / std::max(count - 1, 1.0)};
}

// The statistics of channel c, in one pass over its runs in image order. One thread reduces a
// whole channel, so the result does not depend on the thread count.
Stats channel_stats(const float* x, const ChannelLayout& l, int64_t c) {
  const float pivot = x[l.offset(c, 0)];
  double sum = 0, sq = 0;
  for (int64_t b = 0; b < l.n; ++b) {
    const kernels::DeviationSums s =
        kernels::deviation_sums_f64(l.inner, x + l.offset(c, b), pivot);
    sum += s.sum;
    sq += s.sq;
  }
  return stats_from_sums(sum, sq, static_cast<double>(l.count()), pivot);
}

// channel_stats of channels [c, c + kernels::kRunLanes), bit for bit, the channels sharing one
// loop: for small planes.
void channel_stats_lanes(const float* x, const ChannelLayout& l, int64_t c, Stats* out) {
  constexpr int kLanes = kernels::kRunLanes;
  float pivot[kLanes];
  for (int k = 0; k < kLanes; ++k) pivot[k] = x[l.offset(c + k, 0)];
  kernels::DeviationSums s[kLanes];
  kernels::deviation_sums_f64_runs(l.inner, l.n, x + l.offset(c, 0), l.inner, l.stride, pivot, s);
  for (int k = 0; k < kLanes; ++k)
    out[k] = stats_from_sums(s[k].sum, s[k].sq, static_cast<double>(l.count()), pivot[k]);
}

// Planes of at most kSmallPlane values go kRunLanes channels to a loop of sums, and a block of
// channels to a scale-and-shift loop, their parameters spread over the block's values once for
// every image: a call per plane would cost more than its arithmetic (MobileNetV2's 2x2 to 8x8
// planes). Larger planes stream one channel at a time (four at once measured slower there).
// Same bits either way.
constexpr int64_t kSmallPlane = 64;

// The statistics of channels [a, a + channels).
void batch_stats(const float* x, const ChannelLayout& l, int64_t a, int64_t channels, Stats* out) {
  int64_t c = a;
  for (; l.inner <= kSmallPlane && c + kernels::kRunLanes <= a + channels; c += kernels::kRunLanes)
    channel_stats_lanes(x, l, c, out + (c - a));
  for (; c < a + channels; ++c) out[c - a] = channel_stats(x, l, c);
}

// The forward pass's y = scale * (x - mean) + shift of a channel, in float (centred first: a
// near-constant channel's large scale then multiplies a small difference), with the ReLU's cap
// after it: what the backward pass gates dy by is what the forward pass computed.
kernels::ReluGate affine(const Stats& s, float gamma, float beta, float cap) {
  return {static_cast<float>(s.mean), static_cast<float>(gamma * s.inv_std), beta, cap};
}

// The kept statistics of channel c (ExecContext::stats: three doubles per channel).
Stats kept(const double* stats, int64_t c) {
  return {stats[3 * c], stats[3 * c + 1], stats[3 * c + 2]};
}
void keep(const Stats& s, double* stats, int64_t c) {
  stats[3 * c] = s.mean, stats[3 * c + 1] = s.inv_std, stats[3 * c + 2] = s.unbiased_var;
}

}  // namespace

std::string BatchNorm::describe() const {
  return "batch_norm " + std::to_string(channels_);
}

std::vector<ParamSpec> BatchNorm::param_specs() const {
  return {{"weight", Shape{channels_}, 0, 1.0f}, {"bias", Shape{channels_}, 0, 0.0f}};
}

std::vector<ParamSpec> BatchNorm::state_specs() const {
  return {{"running_mean", Shape{channels_}, 0, 0.0f}, {"running_var", Shape{channels_}, 0, 1.0f}};
}

void BatchNorm::forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const {
  forward_relu(x, y, 0.0f, ctx);
}

// cap 0: no ReLU (kernels::scale_shift's relu_cap).
void BatchNorm::forward_relu(const Tensor& x, Tensor& y, float cap, const ExecContext& ctx) const {
  const ChannelLayout l = layout(x.shape());
  const float* gamma = param(ctx, 0).data();
  const float* beta = param(ctx, 1).data();
  // The running statistics are arena memory bound to the layer: only a training pass that says
  // so moves them. Without them bound (a lone layer in a test), evaluation is not defined.
  ZT_ASSERT(ctx.training || !state_.empty());
  const bool update = ctx.training && ctx.update_stats && !state_.empty();
  constexpr int64_t kBlockValues = 1024;
  const bool small = l.inner <= kSmallPlane;
  const int64_t block = small ? kBlockValues / l.inner : kernels::kRunLanes;
  parallel_for(ctx.pool, channels_, [&](int64_t c0, int64_t c1) {
    Stats stats[kBlockValues];
    float mean_of[kBlockValues], scale_of[kBlockValues], shift_of[kBlockValues];
    for (int64_t a = c0; a < c1; a += block) {
      const int64_t channels = std::min(block, c1 - a);
      // Each channel's statistics are taken before any of its values is written (y may be x).
      if (ctx.training && !(ctx.stats && ctx.stats_kept))
        batch_stats(x.data(), l, a, channels, stats);
      else
        for (int64_t c = a; c < a + channels; ++c)
          stats[c - a] =
              ctx.training
                  ? kept(ctx.stats, c)
                  : Stats{state_[0][c], 1 / std::sqrt(static_cast<double>(state_[1][c]) + kEps), 0};
      for (int64_t c = a; c < a + channels; ++c) {
        const Stats& s = stats[c - a];
        if (ctx.training && ctx.stats && !ctx.stats_kept) keep(s, ctx.stats, c);
        if (update) {
          Tensor mean = state_[0], var = state_[1];  // views of the bound statistics
          mean[c] = static_cast<float>((1 - kMomentum) * mean[c] + kMomentum * s.mean);
          var[c] = static_cast<float>((1 - kMomentum) * var[c] + kMomentum * s.unbiased_var);
        }
      }
      if (!small) {
        for (int64_t c = a; c < a + channels; ++c) {
          const kernels::ReluGate f = affine(stats[c - a], gamma[c], beta[c], cap);
          for (int64_t b = 0; b < l.n; ++b)
            kernels::scale_shift(l.inner, x.data() + l.offset(c, b), f.mean, f.scale, f.shift,
                                 y.data() + l.offset(c, b), cap);
        }
        continue;
      }
      for (int64_t c = a; c < a + channels; ++c) {
        const kernels::ReluGate f = affine(stats[c - a], gamma[c], beta[c], cap);
        for (int64_t i = (c - a) * l.inner; i < (c - a + 1) * l.inner; ++i)
          mean_of[i] = f.mean, scale_of[i] = f.scale, shift_of[i] = f.shift;
      }
      for (int64_t b = 0; b < l.n; ++b)
        kernels::scale_shift_each(channels * l.inner, x.data() + l.offset(a, b), mean_of, scale_of,
                                  shift_of, y.data() + l.offset(a, b), cap);
    }
  });
}

void BatchNorm::backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor& dx,
                         const ExecContext& ctx) {
  backward_gated(x, dy, dx, 0.0f, ctx);
}

void BatchNorm::backward_relu(const Tensor& x, const Tensor& dy, Tensor& dx, float cap,
                              const ExecContext& ctx) {
  ZT_ASSERT(cap > 0.0f);
  backward_gated(x, dy, dx, cap, ctx);
}

void BatchNorm::backward_gated(const Tensor& x, const Tensor& dy, Tensor& dx, float cap,
                               const ExecContext& ctx) {
  const ChannelLayout l = layout(x.shape());
  const float* gamma = param(ctx, 0).data();
  const float* beta = param(ctx, 1).data();
  const float* xd = x.data();
  const float* dyd = dy.data();
  constexpr int kLanes = kernels::kRunLanes;
  parallel_for(ctx.pool, channels_, [&](int64_t c0, int64_t c1) {
    // kRunLanes channels at a time, their sums in one loop for small planes.
    for (int64_t a = c0; a < c1; a += kLanes) {
      const int64_t lanes = std::min<int64_t>(kLanes, c1 - a);
      Stats s[kLanes];
      if (ctx.stats && ctx.stats_kept)
        for (int64_t k = 0; k < lanes; ++k) s[k] = kept(ctx.stats, a + k);
      else
        batch_stats(xd, l, a, lanes, s);
      kernels::ReluGate gates[kLanes];
      for (int64_t k = 0; k < lanes; ++k) gates[k] = affine(s[k], gamma[a + k], beta[a + k], cap);
      const kernels::ReluGate* gate = cap > 0.0f ? gates : nullptr;
      double sum_dy[kLanes] = {}, sum_dy_xhat[kLanes] = {};
      if (lanes == kLanes && l.inner <= kSmallPlane) {
        double mean[kLanes];
        for (int k = 0; k < kLanes; ++k) mean[k] = s[k].mean;
        kernels::GradientSums g[kLanes];
        kernels::gradient_sums_f64_runs(l.inner, l.n, dyd + l.offset(a, 0), xd + l.offset(a, 0),
                                        l.inner, l.stride, mean, g, gate);
        for (int k = 0; k < kLanes; ++k) sum_dy[k] = g[k].dy, sum_dy_xhat[k] = g[k].dy_dev;
      } else {
        for (int64_t b = 0; b < l.n; ++b)
          for (int64_t k = 0; k < lanes; ++k) {
            const int64_t o = l.offset(a + k, b);
            const kernels::GradientSums g = kernels::gradient_sums_f64(
                l.inner, dyd + o, xd + o, s[k].mean, gate ? gate + k : nullptr);
            sum_dy[k] += g.dy, sum_dy_xhat[k] += g.dy_dev;
          }
      }
      for (int64_t k = 0; k < lanes; ++k) {
        const int64_t c = a + k;
        sum_dy_xhat[k] *= s[k].inv_std;
        if (has_grads()) {
          grads_[0][c] += static_cast<float>(sum_dy_xhat[k]);
          grads_[1][c] += static_cast<float>(sum_dy[k]);
        }
        if (dx.empty()) continue;
        // dx = gamma / sigma * (dy - mean(dy) - xhat * mean(dy * xhat)): the batch's mean and
        // variance depend on every x, hence the two correction terms.
        const double m = static_cast<double>(l.count());
        const double scale = gamma[c] * s[k].inv_std, mean_dy = sum_dy[k] / m,
                     mean_dy_xhat = sum_dy_xhat[k] / m;
        for (int64_t b = 0; b < l.n; ++b) {
          const int64_t o = l.offset(c, b);
          kernels::batch_norm_backward_data(l.inner, xd + o, dyd + o, s[k].mean, s[k].inv_std,
                                            scale, mean_dy, mean_dy_xhat, dx.data() + o,
                                            gate ? gate + k : nullptr);
        }
      }
    }
  });
}

}  // namespace zotrain
