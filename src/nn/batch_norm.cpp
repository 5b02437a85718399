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

// Mean, 1 / sqrt(variance + eps) and unbiased variance of channel c, in one pass in double
// around the channel's first value. One thread reduces a whole channel, so the result does not
// depend on the thread count.
Stats channel_stats(const float* x, const ChannelLayout& l, int64_t c) {
  const float pivot = x[l.offset(c, 0)];
  double sum = 0, sq = 0;
  for (int64_t b = 0; b < l.n; ++b) {
    const kernels::DeviationSums s =
        kernels::deviation_sums_f64(l.inner, x + l.offset(c, b), pivot);
    sum += s.sum;
    sq += s.sq;
  }
  const auto count = static_cast<double>(l.count());
  const double shift = sum / count, var = std::max(sq / count - shift * shift, 0.0);
  return {pivot + shift, 1 / std::sqrt(var + BatchNorm::kEps),
          var * count / std::max(count - 1, 1.0)};
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
  parallel_for(ctx.pool, channels_, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const Stats s =
          !ctx.training
              ? Stats{state_[0][c], 1 / std::sqrt(static_cast<double>(state_[1][c]) + kEps), 0}
          : ctx.stats && ctx.stats_kept ? kept(ctx.stats, c)
                                        : channel_stats(x.data(), l, c);
      if (ctx.training && ctx.stats && !ctx.stats_kept) keep(s, ctx.stats, c);
      if (update) {
        Tensor mean = state_[0], var = state_[1];  // views of the bound statistics
        mean[c] = static_cast<float>((1 - kMomentum) * mean[c] + kMomentum * s.mean);
        var[c] = static_cast<float>((1 - kMomentum) * var[c] + kMomentum * s.unbiased_var);
      }
      // Centred first: a near-constant channel's large scale then multiplies a small difference.
      const auto scale = static_cast<float>(gamma[c] * s.inv_std);
      const auto mean = static_cast<float>(s.mean);
      for (int64_t b = 0; b < l.n; ++b)
        kernels::scale_shift(l.inner, x.data() + l.offset(c, b), mean, scale, beta[c],
                             y.data() + l.offset(c, b), cap);
    }
  });
}

void BatchNorm::backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor& dx,
                         const ExecContext& ctx) {
  const ChannelLayout l = layout(x.shape());
  const float* gamma = param(ctx, 0).data();
  parallel_for(ctx.pool, channels_, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const Stats s =
          ctx.stats && ctx.stats_kept ? kept(ctx.stats, c) : channel_stats(x.data(), l, c);
      const float* xd = x.data();
      const float* dyd = dy.data();
      double sum_dy = 0, sum_dy_xhat = 0;
      for (int64_t b = 0; b < l.n; ++b) {
        const int64_t o = l.offset(c, b);
        const kernels::GradientSums g =
            kernels::gradient_sums_f64(l.inner, dyd + o, xd + o, s.mean);
        sum_dy += g.dy;
        sum_dy_xhat += g.dy_dev;
      }
      sum_dy_xhat *= s.inv_std;
      if (has_grads()) {
        grads_[0][c] += static_cast<float>(sum_dy_xhat);
        grads_[1][c] += static_cast<float>(sum_dy);
      }
      if (dx.empty()) continue;
      // dx = gamma / sigma * (dy - mean(dy) - xhat * mean(dy * xhat)): the batch's mean and
      // variance depend on every x, hence the two correction terms.
      const double m = static_cast<double>(l.count());
      const double scale = gamma[c] * s.inv_std, mean_dy = sum_dy / m,
                   mean_dy_xhat = sum_dy_xhat / m;
      for (int64_t b = 0; b < l.n; ++b) {
        const int64_t o = l.offset(c, b);
        kernels::batch_norm_backward_data(l.inner, xd + o, dyd + o, s.mean, s.inv_std, scale,
                                          mean_dy, mean_dy_xhat, dx.data() + o);
      }
    }
  });
}

}  // namespace zotrain
