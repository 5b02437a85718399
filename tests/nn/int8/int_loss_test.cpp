#include "nn/int8/int_loss.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "zotrain/core/qtensor.h"
#include "zotrain/core/rng.h"

namespace zotrain::int8 {
namespace {

// A batch of int8 logits with its labels. Rows come in kinds: full range (with ±127), narrow
// ranges (small differences, so the fractional bits matter), all-zero rows and rows whose label
// is the maximum.
struct Batch {
  int64_t rows, classes;
  int exp;
  std::vector<int8_t> m;
  std::vector<uint8_t> labels;

  QTensor logits() { return QTensor{m.data(), Shape{rows, classes}, exp}; }
  double z(int64_t r, int64_t c) const {
    return std::ldexp(static_cast<double>(m[r * classes + c]), exp);
  }
  // Row r alone, as a batch of one.
  Batch row(int64_t r) const {
    return {1,
            classes,
            exp,
            std::vector<int8_t>(m.begin() + r * classes, m.begin() + (r + 1) * classes),
            {labels[r]}};
  }
};

Batch random_batch(int64_t rows, int64_t classes, int exp, uint64_t seed) {
  Batch b{rows, classes, exp, std::vector<int8_t>(rows * classes), std::vector<uint8_t>(rows)};
  Rng rng(seed, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int8_t* row = b.m.data() + r * classes;
    const int kind = static_cast<int>(r % 5);
    const int width = kind == 0 ? 127 : kind == 1 ? 40 : kind == 2 ? 6 : kind == 3 ? 127 : 0;
    for (int64_t c = 0; c < classes; ++c)
      row[c] = static_cast<int8_t>(static_cast<int>(rng.below(2 * width + 1)) - width);
    if (kind == 0) {  // both boundaries in the row
      row[0] = 127;
      row[classes - 1] = -127;
    }
    b.labels[r] = static_cast<uint8_t>(rng.below(static_cast<uint32_t>(classes)));
    if (kind == 3) row[b.labels[r]] = 127;  // a confident, correct row
  }
  return b;
}

// ---- frac_bits = 0: ElasticZO-INT8's Eq. 12, in double precision ----

// s = floor(m · 47274 · 2^(exp - 15)), per row max_s + floor(log2 Σ_j 2^(s_j - max_s)) - s_label,
// summed over rows. m · 47274 < 2^23, so s is exact in double; the sum has at most 17 terms that
// are powers of two, each computed exactly or as 0 when below the double range. Such a sum
// cannot round up to a power of two, and frexp gives floor(log2) exactly.
int64_t eq12_reference(const Batch& b) {
  int64_t total = 0;
  for (int64_t r = 0; r < b.rows; ++r) {
    std::vector<double> s(b.classes);
    for (int64_t c = 0; c < b.classes; ++c)
      s[c] = std::floor(static_cast<double>(b.m[r * b.classes + c]) * 47274.0 *
                        std::ldexp(1.0, b.exp - 15));
    const double max_s = *std::max_element(s.begin(), s.end());
    double sum = 0;
    for (double v : s) sum += std::ldexp(1.0, static_cast<int>(v - max_s));
    int e = 0;
    std::frexp(sum, &e);  // sum = f · 2^e, f in [0.5, 1): floor(log2 sum) = e - 1
    total += static_cast<int64_t>(max_s) + (e - 1) - static_cast<int64_t>(s[b.labels[r]]);
  }
  return total;
}

TEST(IntLossCrossEntropy, FracBitsZeroIsEq12Exactly) {
  uint64_t seed = 1;
  for (int64_t classes : {2, 3, 10, 17})
    for (int exp = -10; exp <= 4; ++exp) {
      SCOPED_TRACE(::testing::Message() << "classes " << classes << " exp " << exp);
      Batch b = random_batch(40, classes, exp, seed++);
      EXPECT_EQ(cross_entropy(b.logits(), b.labels.data(), 0), eq12_reference(b));
      // Row by row, so that errors of opposite sign cannot cancel in the sum.
      for (int64_t r = 0; r < b.rows; ++r) {
        Batch one = b.row(r);
        ASSERT_EQ(cross_entropy(one.logits(), one.labels.data(), 0), eq12_reference(one))
            << "row " << r;
      }
    }
}

TEST(IntLossCrossEntropy, HandCheckedValues) {
  // All-zero logits over 10 classes: every s is 0, the sum is 10, floor(log2 10) = 3 bits.
  Batch zeros{2, 10, 0, std::vector<int8_t>(20, 0), {0, 9}};
  EXPECT_EQ(cross_entropy(zeros.logits(), zeros.labels.data(), 0), 6);
  // Two classes, logits (127, -127) · 2^0: s = floor(±127 · 1.4427) = 183 and -184; the label at
  // the maximum costs floor(log2(1 + 2^-367)) = 0, the other one 183 + 184 = 367 bits.
  Batch two{2, 2, 0, {127, -127, 127, -127}, {0, 1}};
  EXPECT_EQ(cross_entropy(two.logits(), two.labels.data(), 0), 367);
}

// ---- frac_bits > 0: close to the true cross-entropy in bits ----

// The loss in bits of one row, from the dequantized logits in double precision.
double true_bits(const Batch& b, int64_t r) {
  double max_z = b.z(r, 0);
  for (int64_t c = 1; c < b.classes; ++c) max_z = std::max(max_z, b.z(r, c));
  double sum = 0;
  for (int64_t c = 0; c < b.classes; ++c) sum += std::exp(b.z(r, c) - max_z);
  return (std::log(sum) + max_z - b.z(r, b.labels[r])) / std::log(2.0);
}

// Error budget of one row, in bits:
//  - Mitchell's 2^-f ≈ 1 - f/2 overestimates each non-maximum term by at most a factor 1.0598
//    (at f = 0.47), so the log of the sum by at most log2(1.0598) = 0.0838;
//  - Mitchell's log2(1 + r) ≈ r underestimates by at most 0.0861 (at r = 0.4427);
//  - the logits floored to 2^-frac_bits move the result by less than 2^-frac_bits, the
//    truncations of the terms and of the log fraction by less than 2^-frac_bits + 0.001;
//  - 47274 / 2^15 is log2(e) to a relative 4.9e-6, which matters for wide rows: 5e-6 times
//    the spread between the largest and the label's logit in bits.
// So |error| <= 0.087 + 3 · 2^-frac_bits + 5e-6 · spread: 0.1 bit for frac_bits = 8 and
// narrow rows.
double tolerance_bits(const Batch& b, int64_t r, int frac_bits) {
  double max_z = b.z(r, 0);
  for (int64_t c = 1; c < b.classes; ++c) max_z = std::max(max_z, b.z(r, c));
  const double spread = (max_z - b.z(r, b.labels[r])) / std::log(2.0);
  return 0.087 + 3 * std::ldexp(1.0, -frac_bits) + 5e-6 * spread;
}

TEST(IntLossCrossEntropy, FractionalBitsTrackTheTrueLoss) {
  uint64_t seed = 100;
  for (int frac_bits : {4, 8, 12, 16})
    for (int64_t classes : {2, 10, 17})
      for (int exp = -10; exp <= 4; ++exp) {
        SCOPED_TRACE(::testing::Message()
                     << "frac_bits " << frac_bits << " classes " << classes << " exp " << exp);
        Batch b = random_batch(30, classes, exp, seed++);
        int64_t row_total = 0;
        for (int64_t r = 0; r < b.rows; ++r) {
          Batch one = b.row(r);
          const int64_t row = cross_entropy(one.logits(), one.labels.data(), frac_bits);
          const double got = std::ldexp(static_cast<double>(row), -frac_bits);
          ASSERT_NEAR(got, true_bits(b, r), tolerance_bits(b, r, frac_bits)) << "row " << r;
          row_total += row;
        }
        // The batch is exactly the sum of its rows.
        EXPECT_EQ(cross_entropy(b.logits(), b.labels.data(), frac_bits), row_total);
      }
}

// With whole bits only, the loss of a narrow row is off by up to 1 bit or more: the fractional
// bits are what makes the comparison above pass. This guards the test itself.
TEST(IntLossCrossEntropy, FractionalBitsImproveOnWholeBits) {
  Batch b = random_batch(200, 10, -6, 7);
  double err0 = 0, err8 = 0;
  for (int64_t r = 0; r < b.rows; ++r) {
    Batch one = b.row(r);
    const double want = true_bits(b, r);
    err0 += std::fabs(double(cross_entropy(one.logits(), one.labels.data(), 0)) - want);
    err8 +=
        std::fabs(std::ldexp(double(cross_entropy(one.logits(), one.labels.data(), 8)), -8) - want);
  }
  EXPECT_LT(err8 / b.rows, 0.06);
  EXPECT_GT(err0 / b.rows, 0.2);
}

// ---- the gradient ----

// Error budget per element, in units of 2^-7: Mitchell's exponential changes the terms by at
// most 6 %, which moves a probability by at most 0.0145 (1.86 units, at p = 0.49); the floored
// logits by less than 0.3 % (0.1 unit); the integer division by 1/16 unit; the final rounding by
// half a unit; the label entry is clipped from -128 to -127 when its probability is below 2^-8
// (then its other errors are tiny). Tolerance: 3 units.
TEST(IntLossCrossEntropyGrad, IsSoftmaxMinusOnehotTimes128) {
  uint64_t seed = 200;
  double mean_abs_row_sum = 0;
  int64_t rows_seen = 0;
  for (int64_t classes : {2, 3, 10, 17})
    for (int exp = -10; exp <= 4; ++exp) {
      SCOPED_TRACE(::testing::Message() << "classes " << classes << " exp " << exp);
      Batch b = random_batch(30, classes, exp, seed++);
      std::vector<int8_t> grad(b.rows * classes, 99);
      QTensor d{grad.data(), Shape{b.rows, classes}, 12345};
      cross_entropy_grad(b.logits(), b.labels.data(), d);
      ASSERT_EQ(d.exp, -7);
      for (int64_t r = 0; r < b.rows; ++r) {
        double max_z = b.z(r, 0), sum = 0;
        for (int64_t c = 1; c < classes; ++c) max_z = std::max(max_z, b.z(r, c));
        for (int64_t c = 0; c < classes; ++c) sum += std::exp(b.z(r, c) - max_z);
        int row_sum = 0;
        for (int64_t c = 0; c < classes; ++c) {
          const double p = std::exp(b.z(r, c) - max_z) / sum;
          const double want = (p - (c == b.labels[r] ? 1.0 : 0.0)) * 128.0;
          const int got = grad[r * classes + c];
          ASSERT_NEAR(got, want, 3.0) << "row " << r << " class " << c;
          ASSERT_LE(std::abs(got), 127);
          row_sum += got;
        }
        // Before rounding a row sums to between -classes/16 units and 0 (truncated division);
        // rounding adds up to 1/2 unit per class and clipping 1 unit.
        ASSERT_LE(std::abs(row_sum), classes / 2 + 1 + classes / 16 + 1) << "row " << r;
        mean_abs_row_sum += std::abs(row_sum);
        ++rows_seen;
      }
    }
  // Independent roundings of ~10 classes: typical |sum| is about 0.7 units, well below 1.5.
  EXPECT_LT(mean_abs_row_sum / static_cast<double>(rows_seen), 1.5);
}

TEST(IntLossCrossEntropyGrad, HandCheckedValues) {
  // All-zero logits over 4 classes: softmax 1/4 = 32 units, the label 32 - 128 = -96.
  std::vector<int8_t> zeros(8, 0), grad(8, 0);
  const std::vector<uint8_t> labels = {2, 0};
  QTensor d{grad.data(), Shape{2, 4}, 0};
  cross_entropy_grad(QTensor{zeros.data(), Shape{2, 4}, 3}, labels.data(), d);
  EXPECT_EQ(grad, (std::vector<int8_t>{32, 32, -96, 32, -96, 32, 32, 32}));
  // A confident correct row has a zero gradient; a confident wrong one -127 at the label (from
  // -128, clipped) and +127 at the maximum (128 clipped).
  std::vector<int8_t> sure = {127, -127, -127, 127};
  std::vector<int8_t> g2(4, 5);
  const std::vector<uint8_t> l2 = {0, 0};
  QTensor d2{g2.data(), Shape{2, 2}, 0};
  cross_entropy_grad(QTensor{sure.data(), Shape{2, 2}, 0}, l2.data(), d2);
  EXPECT_EQ(g2, (std::vector<int8_t>{0, 0, -127, 127}));
}

// ---- accuracy ----

TEST(IntLossCountCorrect, FirstMaximumWinsTies) {
  // Rows: clear win at the label, clear loss, a tie won by the label (first), a tie lost by the
  // label (second), all-zero with label 0 (correct) and with label 2 (wrong), ±127.
  const std::vector<int8_t> m = {1, 9, 3, 9, 1, 3, 7,    2,   7,   7,    2,    7,
                                 0, 0, 0, 0, 0, 0, -127, 127, 127, -127, -127, -127};
  const std::vector<uint8_t> labels = {1, 1, 0, 2, 0, 2, 1, 1};
  std::vector<int8_t> data = m;
  QTensor q{data.data(), Shape{8, 3}, -4};
  EXPECT_EQ(count_correct(q, labels.data()), 1 + 0 + 1 + 0 + 1 + 0 + 1 + 0);
  EXPECT_EQ(count_correct(q.rows(0, 1), labels.data()), 1);
  EXPECT_EQ(count_correct(q.rows(3, 4), labels.data() + 3), 0);
}

TEST(IntLossCountCorrect, MatchesArgmaxOfTheDequantizedLogits) {
  uint64_t seed = 300;
  for (int64_t classes : {2, 10, 17})
    for (int exp : {-10, -3, 0, 4}) {
      Batch b = random_batch(200, classes, exp, seed++);
      for (int64_t r = 0; r < b.rows; r += 7)  // plant ties at the label
        b.m[r * classes + (b.labels[r] + 1) % classes] = b.m[r * classes + b.labels[r]];
      int64_t want = 0;
      for (int64_t r = 0; r < b.rows; ++r) {
        std::vector<double> z(classes);
        for (int64_t c = 0; c < classes; ++c) z[c] = b.z(r, c);
        want += std::max_element(z.begin(), z.end()) - z.begin() == b.labels[r];
      }
      EXPECT_EQ(count_correct(b.logits(), b.labels.data()), want)
          << "classes " << classes << " exp " << exp;
      EXPECT_GT(want, 0);
    }
}

}  // namespace
}  // namespace zotrain::int8
