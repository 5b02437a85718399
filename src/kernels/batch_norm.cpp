// Plain loops the compiler vectorizes, built for AVX2 and the baseline (target_clones.h).
#include "kernels/batch_norm.h"

#include "kernels/activation.h"
#include "target_clones.h"

namespace zotrain::kernels {

namespace {

constexpr int kParts = 8;

// The eight partial sums of each accumulator, added in order.
inline __attribute__((always_inline)) double total(const double* part) {
  double sum = part[0];
  for (int j = 1; j < kParts; ++j) sum += part[j];
  return sum;
}

// Calls term(i, j) for i in [0, n), j = the partial sum it adds to.
template <typename Term>
inline __attribute__((always_inline)) void interleaved(int64_t n, Term term) {
  const int64_t whole = n / kParts * kParts;
  for (int64_t i = 0; i < whole; i += kParts)
    for (int j = 0; j < kParts; ++j) term(i + j, j);
  for (int64_t i = whole; i < n; ++i) term(i, static_cast<int>(i - whole));
}

// Calls loop(dy_at) with dy_at(i) = dy[i], or dy[i] gated by the ReLU (ReluGate::gated): the
// loop compiled once for each, so that neither tests the gate per value.
template <typename Loop>
inline __attribute__((always_inline)) void with_dy(const float* x, const float* dy,
                                                   const ReluGate* gate, Loop loop) {
  if (gate) {
    const ReluGate r = *gate;
    loop([&](int64_t i) __attribute__((always_inline)) { return r.gated(x[i], dy[i]); });
  } else {
    loop([&](int64_t i) __attribute__((always_inline)) { return dy[i]; });
  }
}

}  // namespace

ZT_CLONES_512 DeviationSums deviation_sums_f64(int64_t n, const float* x, float pivot) {
  double sum[kParts] = {}, sq[kParts] = {};
  interleaved(n, [&](int64_t i, int j) {
    const double d = double{x[i]} - pivot;
    sum[j] += d;
    sq[j] += d * d;
  });
  return {total(sum), total(sq)};
}

typedef float RunFloats __attribute__((vector_size(kRunLanes * sizeof(float))));
typedef double RunDoubles __attribute__((vector_size(kRunLanes * sizeof(double))));

// interleaved() over kRunLanes runs at once (run k of input m at in[m] + k * stride): calls
// term(v, j) with v[m] the runs' values of input m at one index, a lane per run, j the partial
// sum the one-run loop adds that index to. Unrolled, so that the partial sums can live in
// registers.
template <int M, typename Term>
inline __attribute__((always_inline)) void interleaved_runs(int64_t n, const float* const (&in)[M],
                                                            int64_t stride, Term term) {
  static_assert(kRunLanes == 4, "the transposition below is 4 x 4");
  // Indices i..i+3 of the four runs, transposed: a vector per index, a lane per run.
  auto four = [&](int64_t i, int j) __attribute__((always_inline)) {
    RunFloats v[4][M];
    for (int m = 0; m < M; ++m) {
      RunFloats r[kRunLanes];
      for (int k = 0; k < kRunLanes; ++k)
        __builtin_memcpy(&r[k], in[m] + k * stride + i, sizeof r[k]);
      const RunFloats t0 = __builtin_shufflevector(r[0], r[1], 0, 4, 1, 5);
      const RunFloats t1 = __builtin_shufflevector(r[0], r[1], 2, 6, 3, 7);
      const RunFloats t2 = __builtin_shufflevector(r[2], r[3], 0, 4, 1, 5);
      const RunFloats t3 = __builtin_shufflevector(r[2], r[3], 2, 6, 3, 7);
      v[0][m] = __builtin_shufflevector(t0, t2, 0, 1, 4, 5);
      v[1][m] = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
      v[2][m] = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
      v[3][m] = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
    }
    for (int e = 0; e < 4; ++e) term(v[e], j + e);
  };
  const int64_t whole = n / kParts * kParts;
  for (int64_t i = 0; i < whole; i += kParts) four(i, 0), four(i + 4, 4);
  int j = 0;
  if (n - whole >= 4) four(whole, 0), j = 4;
  for (; whole + j < n; ++j) {
    float values[M][kRunLanes];
    for (int m = 0; m < M; ++m)
      for (int k = 0; k < kRunLanes; ++k) values[m][k] = in[m][k * stride + whole + j];
    RunFloats v[M];
    __builtin_memcpy(v, values, sizeof v);
    term(v, j);
  }
}

// total() of each lane, into sum (no vector return values: the baseline clone has no AVX).
inline __attribute__((always_inline)) void lane_totals(const RunDoubles* part, RunDoubles& sum) {
  sum = part[0];
#pragma GCC unroll 8
  for (int j = 1; j < kParts; ++j) sum += part[j];
}

// The totals of two sums over the runs, each lane as interleaved() and total() add one run's:
// terms(v, a, b) gives an index's terms. Runs shorter than kParts leave partial sums at zero:
// their total is then the running sum of the terms, each first added to a zero (its partial
// sum), plus a zero, with no partial sums to hold in registers.
template <int M, typename Terms>
inline __attribute__((always_inline)) void two_sums_runs(int64_t n, const float* const (&in)[M],
                                                         int64_t stride, Terms terms,
                                                         RunDoubles& a_total, RunDoubles& b_total) {
  const RunDoubles zero = {};
  if (n < kParts) {
    a_total = b_total = zero;
    interleaved_runs<M>(
        n, in, stride, [&](const RunFloats* v, int) __attribute__((always_inline)) {
          RunDoubles a, b;
          terms(v, a, b);
          a_total += zero + a;
          b_total += zero + b;
        });
    a_total += zero;
    b_total += zero;
    return;
  }
  RunDoubles a_part[kParts], b_part[kParts];
#pragma GCC unroll 8
  for (int j = 0; j < kParts; ++j) a_part[j] = b_part[j] = zero;
  interleaved_runs<M>(
      n, in, stride, [&](const RunFloats* v, int j) __attribute__((always_inline)) {
        RunDoubles a, b;
        terms(v, a, b);
        a_part[j] += a;
        b_part[j] += b;
      });
  lane_totals(a_part, a_total), lane_totals(b_part, b_total);
}

// two_sums_runs over `blocks` blocks (block b's runs at in[m] + b * block_stride), the blocks'
// totals added in order from zero (a channel's sums over the images).
template <int M, typename Terms>
inline __attribute__((always_inline)) void two_sums_blocks(int64_t n, int64_t blocks,
                                                           const float* const (&in)[M],
                                                           int64_t stride, int64_t block_stride,
                                                           Terms terms, RunDoubles& a_total,
                                                           RunDoubles& b_total) {
  a_total = b_total = RunDoubles{};
  for (int64_t block = 0; block < blocks; ++block) {
    const float* at[M];
    for (int m = 0; m < M; ++m) at[m] = in[m] + block * block_stride;
    RunDoubles a, b;
    two_sums_runs<M>(n, at, stride, terms, a, b);
    a_total += a;
    b_total += b;
  }
}

ZT_CLONES_512 void deviation_sums_f64_runs(int64_t n, int64_t blocks, const float* x,
                                           int64_t stride, int64_t block_stride, const float* pivot,
                                           DeviationSums* out) {
  RunDoubles p, sum, sq;
  for (int k = 0; k < kRunLanes; ++k) p[k] = pivot[k];
  two_sums_blocks<1>(
      n, blocks, {x}, stride, block_stride,
      [&](const RunFloats* v, RunDoubles& d, RunDoubles& d2) __attribute__((always_inline)) {
        d = __builtin_convertvector(v[0], RunDoubles) - p;
        d2 = d * d;
      },
      sum, sq);
  for (int k = 0; k < kRunLanes; ++k) out[k] = {sum[k], sq[k]};
}

typedef int32_t RunInts __attribute__((vector_size(kRunLanes * sizeof(int32_t))));

ZT_CLONES_512 void gradient_sums_f64_runs(int64_t n, int64_t blocks, const float* dy,
                                          const float* x, int64_t stride, int64_t block_stride,
                                          const double* mean, GradientSums* out,
                                          const ReluGate* gate) {
  RunDoubles m, sum, dev;
  for (int k = 0; k < kRunLanes; ++k) m[k] = mean[k];
  auto sums = [&](auto gated) __attribute__((always_inline)) {
    two_sums_blocks<2>(
        n, blocks, {dy, x}, stride, block_stride,
        [&](const RunFloats* v, RunDoubles& g, RunDoubles& g_dev) __attribute__((always_inline)) {
          g = __builtin_convertvector(gated(v[0], v[1]), RunDoubles);
          g_dev = g * (__builtin_convertvector(v[1], RunDoubles) - m);
        },
        sum, dev);
  };
  if (gate) {
    RunFloats gm, gs, gb, gc;
    for (int k = 0; k < kRunLanes; ++k)
      gm[k] = gate[k].mean, gs[k] = gate[k].scale, gb[k] = gate[k].shift, gc[k] = gate[k].cap;
    // ReluGate::gated lane by lane.
    sums([&](RunFloats d, RunFloats xv) __attribute__((always_inline)) {
      const RunFloats y = gs * (xv - gm) + gb;
      return reinterpret_cast<RunFloats>(reinterpret_cast<RunInts>(d) & ((y > 0.0f) & (y < gc)));
    });
  } else {
    sums([](RunFloats d, RunFloats) __attribute__((always_inline)) { return d; });
  }
  for (int k = 0; k < kRunLanes; ++k) out[k] = {sum[k], dev[k]};
}

ZT_CLONES_512 GradientSums gradient_sums_f64(int64_t n, const float* dy, const float* x,
                                             double mean, const ReluGate* gate) {
  double sum[kParts] = {}, dev[kParts] = {};
  with_dy(
      x, dy, gate, [&](auto dy_at) __attribute__((always_inline)) {
        interleaved(
            n, [&](int64_t i, int j) __attribute__((always_inline)) {
              const float g = dy_at(i);
              sum[j] += g;
              dev[j] += g * (x[i] - mean);
            });
      });
  return {total(sum), total(dev)};
}

ZT_CLONES void scale_shift(int64_t n, const float* x, float mean, float scale, float shift,
                           float* y, float relu_cap) {
  if (relu_cap > 0.0f)
    for (int64_t i = 0; i < n; ++i) y[i] = relu_value(scale * (x[i] - mean) + shift, relu_cap);
  else
    for (int64_t i = 0; i < n; ++i) y[i] = scale * (x[i] - mean) + shift;
}

ZT_CLONES void scale_shift_each(int64_t n, const float* x, const float* mean, const float* scale,
                                const float* shift, float* y, float relu_cap) {
  if (relu_cap > 0.0f)
    for (int64_t i = 0; i < n; ++i)
      y[i] = relu_value(scale[i] * (x[i] - mean[i]) + shift[i], relu_cap);
  else
    for (int64_t i = 0; i < n; ++i) y[i] = scale[i] * (x[i] - mean[i]) + shift[i];
}

ZT_CLONES_512 void batch_norm_backward_data(int64_t n, const float* x, const float* dy, double mean,
                                            double inv_std, double scale, double mean_dy,
                                            double mean_dy_xhat, float* dx, const ReluGate* gate) {
  with_dy(
      x, dy, gate, [&](auto dy_at) __attribute__((always_inline)) {
        for (int64_t i = 0; i < n; ++i) {
          const double xhat = (x[i] - mean) * inv_std;
          dx[i] = static_cast<float>(scale * (dy_at(i) - mean_dy - xhat * mean_dy_xhat));
        }
      });
}

}  // namespace zotrain::kernels
