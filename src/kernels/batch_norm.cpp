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

}  // namespace

ZT_CLONES DeviationSums deviation_sums_f64(int64_t n, const float* x, float pivot) {
  double sum[kParts] = {}, sq[kParts] = {};
  interleaved(n, [&](int64_t i, int j) {
    const double d = double{x[i]} - pivot;
    sum[j] += d;
    sq[j] += d * d;
  });
  return {total(sum), total(sq)};
}

ZT_CLONES GradientSums gradient_sums_f64(int64_t n, const float* dy, const float* x, double mean) {
  double sum[kParts] = {}, dev[kParts] = {};
  interleaved(n, [&](int64_t i, int j) {
    sum[j] += dy[i];
    dev[j] += dy[i] * (x[i] - mean);
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

ZT_CLONES void batch_norm_backward_data(int64_t n, const float* x, const float* dy, double mean,
                                        double inv_std, double scale, double mean_dy,
                                        double mean_dy_xhat, float* dx) {
  for (int64_t i = 0; i < n; ++i) {
    const double xhat = (x[i] - mean) * inv_std;
    dx[i] = static_cast<float>(scale * (dy[i] - mean_dy - xhat * mean_dy_xhat));
  }
}

}  // namespace zotrain::kernels
