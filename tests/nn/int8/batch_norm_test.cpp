// The integer batch norm against a double-precision transcription of its definition: each
// channel centred on its batch mean and divided by 2^k, k = round(log2 sigma) (nearest in the log
// domain), and dx = 2^-k (dy - mean(dy)), the gradient of that function (k is constant almost
// everywhere); with fixed_norm divided by sigma itself, dx alike. Outputs within the one rounding
// shift (and the mean's 2^-8 units, and the fixed multiplier's 2^-12); the running statistics as
// specified; the same bits for any thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "zotrain/core/rng.h"
#include "zotrain/core/thread_pool.h"
#include "zotrain/nn/int8/qlayer.h"
#include "zotrain/nn/layer_spec.h"

namespace zotrain {
namespace {

struct Buffers {
  Shape shape;
  std::unique_ptr<QLayer> layer = make_qlayer(LayerSpec::batch_norm(), shape);
  std::vector<int32_t> state = std::vector<int32_t>(static_cast<size_t>(layer->state_elems()));
  std::vector<int32_t> acc;
  std::vector<uint8_t> work;
  std::vector<int16_t> stage;
  std::vector<int32_t> ranges;
  explicit Buffers(const Shape& s, int threads = 1) : shape(s) {
    acc.resize(static_cast<size_t>(layer->acc_elems(s) * threads));
    work.resize(static_cast<size_t>(layer->work_bytes(s) * threads));
    stage.resize(static_cast<size_t>(layer->stage_elems(s)));
    ranges.resize(static_cast<size_t>(s[0]));
    layer->bind_state(state.data());
    layer->init_state(state.data());
  }
  QExecContext context(ThreadPool* pool = nullptr) {
    QExecContext ctx{acc.data(), work.data(), nullptr, stage.data(), ranges.data()};
    ctx.pool = pool;
    ctx.acc_stride = layer->acc_elems(shape);
    ctx.work_stride = layer->work_bytes(shape);
    return ctx;
  }
};

// Mantissas whose channels have different means and spreads (one constant channel).
std::vector<int8_t> channels_apart(const Shape& s, uint64_t seed) {
  Rng rng(seed, 1);
  const int64_t n = s[0], c = s[1], inner = s.numel() / (n * c);
  std::vector<int8_t> m(static_cast<size_t>(s.numel()));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < inner; ++i) {
        const int spread = ch == 1 ? 0 : 1 << (ch % 7);
        const int centre = static_cast<int>(ch * 13 % 60) - 30;
        const int v = centre + (spread ? static_cast<int>(rng.below(2 * spread + 1)) - spread : 0);
        m[static_cast<size_t>((b * c + ch) * inner + i)] =
            static_cast<int8_t>(std::clamp(v, -127, 127));
      }
  return m;
}

struct Reference {
  std::vector<double> mean, divisor;  // per channel, in mantissa units
};

// The divisor of a channel of variance var: the power of two nearest its deviation in the log
// domain, or with fixed_norm the deviation.
double divisor_of(double var, bool fixed) {
  return fixed ? std::sqrt(var) : std::exp2(std::floor(std::log2(var) / 2 + 0.5));
}

// Each channel's divisor from its variance; a constant channel (variance 0) takes the largest
// power of two of the others.
std::vector<double> divisors(const std::vector<double>& var, bool fixed) {
  double widest = 0;
  for (double v : var)
    if (v > 0) widest = std::max(widest, divisor_of(v, false));
  std::vector<double> d;
  for (double v : var) d.push_back(v > 0 ? divisor_of(v, fixed) : widest);
  return d;
}

Reference reference(const std::vector<int8_t>& m, const Shape& s, bool fixed = false) {
  const int64_t n = s[0], c = s[1], inner = s.numel() / (n * c), count = n * inner;
  Reference r;
  std::vector<double> var(static_cast<size_t>(c));
  for (int64_t ch = 0; ch < c; ++ch) {
    int64_t sum = 0, sq = 0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t v = m[static_cast<size_t>((b * c + ch) * inner + i)];
        sum += v, sq += v * v;
      }
    const int64_t var_times_count2 = sq * count - sum * sum;  // exact: zero means constant
    var[static_cast<size_t>(ch)] =
        static_cast<double>(var_times_count2) / static_cast<double>(count * count);
    r.mean.push_back(static_cast<double>(sum) / static_cast<double>(count));
  }
  r.divisor = divisors(var, fixed);
  return r;
}

// |got · 2^exp - want| within half the output's unit (a whole one at 127) plus the mean's rounding
// (2^-9 mantissa units of the input, divided by the channel's divisor) and a fixed multiplier's
// (2^-12 of the value).
void expect_normalized(const std::vector<int8_t>& got, int exp, const std::vector<double>& want,
                       const std::vector<double>& divisor, const Shape& s) {
  const int64_t n = s[0], c = s[1], inner = s.numel() / (n * c);
  const double unit = std::ldexp(1.0, exp);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < inner; ++i) {
        const size_t k = static_cast<size_t>((b * c + ch) * inner + i);
        // The largest value can round to 128 units, which int8 saturates to 127.
        const double rounding = std::abs(got[k]) == 127 ? unit : 0.5 * unit;
        ASSERT_NEAR(got[k] * unit, want[k],
                    rounding + std::ldexp(1.0, -9) / divisor[ch] +
                        std::ldexp(std::abs(want[k]), -12) + 1e-9)
            << "row " << b << " channel " << ch << " element " << i;
      }
}

void check_training_pass(const Shape& s, int threads, bool fixed = false) {
  ThreadPool pool(threads);
  Buffers buf(s, threads);
  std::vector<int8_t> x = channels_apart(s, 7), y(x.size()), dy(x.size()), dx(x.size());
  Rng rng(8, 2);
  for (int8_t& v : dy) v = static_cast<int8_t>(static_cast<int>(rng.below(255)) - 127);
  QTensor xq{x.data(), s, -5}, yq{y.data(), s, 0}, dyq{dy.data(), s, -9}, dxq{dx.data(), s, 0};
  QExecContext ctx = buf.context(threads > 1 ? &pool : nullptr);
  ctx.fixed_norm = fixed;
  buf.layer->forward(xq, yq, ctx);
  buf.layer->backward(xq, yq, dyq, dxq, nullptr, ctx);

  const Reference r = reference(x, s, fixed);
  const int64_t n = s[0], c = s[1], inner = s.numel() / (n * c);
  std::vector<double> want_y(x.size()), want_dx(x.size());
  std::vector<double> dy_mean(static_cast<size_t>(c), 0.0);
  for (size_t k = 0; k < x.size(); ++k) dy_mean[k / inner % c] += dy[k];
  for (double& v : dy_mean) v /= static_cast<double>(n * inner);
  for (size_t k = 0; k < x.size(); ++k) {
    const size_t ch = k / inner % c;
    // The output does not depend on the input's exponent; dx is in units of x's.
    want_y[k] = (x[k] - r.mean[ch]) / r.divisor[ch];
    want_dx[k] = std::ldexp((dy[k] - dy_mean[ch]) / r.divisor[ch], dyq.exp - xq.exp);
  }
  expect_normalized(y, yq.exp, want_y, r.divisor, s);
  std::vector<double> dx_divisor(r.divisor);
  for (double& d : dx_divisor) d = std::ldexp(d, xq.exp - dyq.exp);
  expect_normalized(dx, dxq.exp, want_dx, dx_divisor, s);
}

TEST(QBatchNorm, TrainingPassMatchesTheDefinitionOverPoints) {
  check_training_pass(Shape{3, 9, 1, 11}, 1);
}

TEST(QBatchNorm, TrainingPassMatchesTheDefinitionOfFeatures) {
  check_training_pass(Shape{17, 10}, 1);
}

TEST(QBatchNorm, FixedDivisorMatchesTheDefinition) {
  check_training_pass(Shape{3, 9, 1, 11}, 1, true);
  check_training_pass(Shape{17, 10}, 2, true);
}

// The fixed divisor follows the spread: an input whose channels are scaled by 5/4 (exactly, in
// mantissas that are multiples of 4) gives the same output within a unit; the power of two nearest
// the deviation stays put for some channels and scales their output by 5/4.
TEST(QBatchNorm, FixedDivisorFollowsTheSpread) {
  const Shape s{8, 4, 1, 6};
  std::vector<int8_t> x = channels_apart(s, 12), wide(x.size());
  for (size_t k = 0; k < x.size(); ++k) {
    x[k] = static_cast<int8_t>(std::clamp(x[k] / 4 * 4, -100, 100));
    wide[k] = static_cast<int8_t>(x[k] / 4 * 5);
  }
  for (bool fixed : {true, false}) {
    Buffers buf(s);
    QExecContext ctx = buf.context();
    ctx.fixed_norm = fixed;
    std::vector<int8_t> y(x.size()), y_wide(x.size());
    QTensor xq{x.data(), s, 0}, wq{wide.data(), s, 0}, yq{y.data(), s, 0};
    QTensor ywq{y_wide.data(), s, 0};
    buf.layer->forward(xq, yq, ctx);
    buf.layer->forward(wq, ywq, ctx);
    double largest = 0;  // difference, in units of y
    for (size_t k = 0; k < x.size(); ++k)
      largest = std::max(largest, std::abs(y[k] - std::ldexp(y_wide[k], ywq.exp - yq.exp)));
    if (fixed)
      EXPECT_LE(largest, 1.0);
    else
      EXPECT_GT(largest, 8.0);
  }
}

TEST(QBatchNorm, SameBitsForAnyThreadCount) {
  const Shape s{5, 12, 1, 7};
  for (bool fixed : {false, true}) {
    std::vector<std::vector<int8_t>> outputs;
    std::vector<std::vector<int32_t>> states;
    std::vector<int> exps;
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      Buffers buf(s, threads);
      std::vector<int8_t> x = channels_apart(s, 9), y(x.size());
      QTensor xq{x.data(), s, 2}, yq{y.data(), s, 0};
      QExecContext ctx = buf.context(&pool);
      ctx.update_stats = true;
      ctx.fixed_norm = fixed;
      buf.layer->forward(xq, yq, ctx);
      outputs.push_back(y);
      states.push_back(buf.state);
      exps.push_back(yq.exp);
    }
    for (size_t i = 1; i < outputs.size(); ++i) {
      EXPECT_EQ(outputs[i], outputs[0]) << fixed << i;
      EXPECT_EQ(states[i], states[0]) << fixed << i;
      EXPECT_EQ(exps[i], exps[0]) << fixed << i;
    }
  }
}

// Only a pass that says so moves the statistics; the first update takes the batch's whole, the
// next ones move 1/8 of the way, and evaluation normalizes by them whatever the input's exponent.
TEST(QBatchNorm, RunningStatisticsAndEvaluation) {
  const Shape s{4, 6, 1, 8};
  Buffers buf(s);
  std::vector<int32_t> initial = buf.state;
  std::vector<int8_t> a = channels_apart(s, 10), b = channels_apart(s, 11), y(a.size());
  for (int8_t& v : b) v = static_cast<int8_t>(std::clamp(v + 20, -127, 127));
  QTensor aq{a.data(), s, -3}, bq{b.data(), s, -3}, yq{y.data(), s, 0};
  QExecContext ctx = buf.context();
  buf.layer->forward(aq, yq, ctx);
  EXPECT_EQ(buf.state, initial);  // a training pass without update_stats

  ctx.update_stats = true;
  buf.layer->forward(aq, yq, ctx);
  const Reference ra = reference(a, s), rb = reference(b, s);
  EXPECT_EQ(buf.state[0], -3);  // e_ref: the exponent of the first update's input
  EXPECT_EQ(buf.state[1], 1);
  for (int64_t c = 0; c < s[1]; ++c)
    EXPECT_NEAR(buf.state[static_cast<size_t>(2 + c)], ra.mean[c] * 256, 0.5) << c;
  std::vector<int32_t> after_a = buf.state;
  buf.layer->forward(bq, yq, ctx);
  for (int64_t c = 0; c < s[1]; ++c) {
    const double want = after_a[static_cast<size_t>(2 + c)] +
                        (rb.mean[c] * 256 - after_a[static_cast<size_t>(2 + c)]) / 8;
    EXPECT_NEAR(buf.state[static_cast<size_t>(2 + c)], want, 1.0) << c;
  }

  // Evaluation of b, given with another exponent (its values scaled by 2^2 relative to e_ref):
  // centred on the running mean, divided by the power of two nearest the running deviation (or
  // with fixed_norm by the deviation).
  ctx.training = false;
  ctx.update_stats = false;
  const std::vector<int32_t> before_eval = buf.state;
  QTensor b_up{b.data(), s, -5};
  for (bool fixed : {false, true}) {
    ctx.fixed_norm = fixed;
    buf.layer->forward(b_up, yq, ctx);
    EXPECT_EQ(buf.state, before_eval);
    const int64_t n = s[0], c = s[1], inner = 8;
    std::vector<double> want(b.size()), var(static_cast<size_t>(c));
    // The state's variance has 4 fraction bits in units of 2^(2 e_ref); b_up's mantissa unit is
    // 2^-5 = 2^(e_ref - 2), so in b_up's squared units the state's integer itself.
    for (int64_t ch = 0; ch < c; ++ch)
      var[static_cast<size_t>(ch)] = buf.state[static_cast<size_t>(2 + c + ch)];
    const std::vector<double> divisor = divisors(var, fixed);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < inner; ++i) {
          const size_t k = static_cast<size_t>((r * c + ch) * inner + i);
          const double mean = buf.state[static_cast<size_t>(2 + ch)] / 256.0 * 4;
          want[k] = (b[k] - mean) / divisor[static_cast<size_t>(ch)];
        }
    expect_normalized(y, yq.exp, want, divisor, s);
  }
}

// With average_stats, the running statistics after k updates are the mean of the k batches'
// (QNetwork::average_stats, precise batch norm), within the rounding of each step.
TEST(QBatchNorm, AveragedStatisticsAreTheMeanOfTheBatches) {
  const Shape s{4, 5, 1, 6};
  Buffers buf(s);
  QExecContext ctx = buf.context();
  ctx.update_stats = true;
  ctx.average_stats = true;
  std::vector<double> mean(5, 0.0);
  for (int k = 0; k < 3; ++k) {
    std::vector<int8_t> x = channels_apart(s, 20 + k), y(x.size());
    for (int8_t& v : x) v = static_cast<int8_t>(std::clamp(v + 9 * k, -127, 127));
    QTensor xq{x.data(), s, 1}, yq{y.data(), s, 0};
    buf.layer->forward(xq, yq, ctx);
    const Reference r = reference(x, s);
    for (int64_t c = 0; c < 5; ++c) mean[static_cast<size_t>(c)] += r.mean[c] * 256 / 3;
  }
  EXPECT_EQ(buf.state[1], 3);
  for (int64_t c = 0; c < 5; ++c)
    EXPECT_NEAR(buf.state[static_cast<size_t>(2 + c)], mean[static_cast<size_t>(c)], 1.5) << c;
}

TEST(QBatchNorm, RefusesStatesItCannotHold) {
  const Shape s{2, 3};
  Buffers buf(s);
  EXPECT_TRUE(buf.layer->valid_state(buf.state.data()));
  std::vector<int32_t> bad = buf.state;
  bad[0] = 100;  // an exponent beyond any int8 tensor's
  EXPECT_FALSE(buf.layer->valid_state(bad.data()));
  bad = buf.state;
  bad[1] = -1;  // a negative number of updates
  EXPECT_FALSE(buf.layer->valid_state(bad.data()));
  bad = buf.state;
  bad[2 + 3] = -1;  // a negative variance
  EXPECT_FALSE(buf.layer->valid_state(bad.data()));
}

}  // namespace
}  // namespace zotrain
