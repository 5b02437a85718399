#include "nn/int8/int_loss.h"

#include <bit>

#include "kernels/int8.h"

namespace zotrain::int8 {

namespace {

// log2(e) · 2^15, NITI's base change.
constexpr int64_t kLog2E = 47274;
// 2^kHead is the largest softmax term (the row maximum's); the others are smaller.
constexpr int kHead = 16;

// s = floor(m · log2(e) · 2^(exp + frac_bits)): the logit in units of 2^-frac_bits bits.
int64_t base2(int8_t m, int exp, int frac_bits) {
  const int64_t v = m * kLog2E;
  int shift = exp + frac_bits - 15;
  if (shift >= 0) return v * (int64_t{1} << (shift > 40 ? 40 : shift));
  shift = -shift;
  return shift > 62 ? (v < 0 ? -1 : 0) : v >> shift;  // arithmetic shift: floor
}

// 2^(kHead - d / 2^frac_bits) for d >= 0: whole bits by a shift, the fraction f by Mitchell's
// linear interpolation 2^-f ≈ 1 - f/2.
int64_t pow2_term(int64_t d, int frac_bits) {
  const int64_t whole = d >> frac_bits, f = d & ((int64_t{1} << frac_bits) - 1);
  const int64_t shift = whole + frac_bits + 1;
  if (shift >= 62) return 0;
  return (((int64_t{2} << frac_bits) - f) << kHead) >> shift;
}

// log2(sum) in units of 2^-frac_bits: the top bit position plus Mitchell's fraction.
int64_t log2_fixed(int64_t sum, int frac_bits) {
  const int top = std::bit_width(static_cast<uint64_t>(sum)) - 1;
  const int64_t rest = sum - (int64_t{1} << top);
  return (int64_t{top} << frac_bits) + ((rest << frac_bits) >> top);
}

struct Row {
  int64_t max = 0, sum = 0;
};

Row softmax_row(const int8_t* m, int64_t classes, int exp, int frac_bits) {
  Row r;
  r.max = base2(m[0], exp, frac_bits);
  for (int64_t j = 1; j < classes; ++j) {
    const int64_t s = base2(m[j], exp, frac_bits);
    r.max = s > r.max ? s : r.max;
  }
  for (int64_t j = 0; j < classes; ++j)
    r.sum += pow2_term(r.max - base2(m[j], exp, frac_bits), frac_bits);
  return r;
}

}  // namespace

int64_t cross_entropy(const QTensor& logits, const uint8_t* labels, int frac_bits) {
  const int64_t rows = logits.shape[0], classes = logits.shape[1];
  int64_t total = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const int8_t* m = logits.data + i * classes;
    const Row r = softmax_row(m, classes, logits.exp, frac_bits);
    // log2 Σ 2^s = max + log2(sum) - kHead; minus the label's s.
    total += r.max + log2_fixed(r.sum, frac_bits) - (int64_t{kHead} << frac_bits) -
             base2(m[labels[i]], logits.exp, frac_bits);
  }
  return total;
}

void cross_entropy_grad(const QTensor& logits, const uint8_t* labels, QTensor& dlogits) {
  const int64_t rows = logits.shape[0], classes = logits.shape[1];
  constexpr int kOne = 11;  // probabilities times 2^11, brought to 2^7 by a rounding shift
  for (int64_t i = 0; i < rows; ++i) {
    const int8_t* m = logits.data + i * classes;
    const Row r = softmax_row(m, classes, logits.exp, kGradFracBits);
    for (int64_t j = 0; j < classes; ++j) {
      const int64_t term = pow2_term(r.max - base2(m[j], logits.exp, kGradFracBits), kGradFracBits);
      int64_t g = (term << kOne) / r.sum;
      if (j == labels[i]) g -= int64_t{1} << kOne;
      dlogits.data[i * classes + j] = kernels::clip_s8(kernels::round_shift(g, kOne - 7));
    }
  }
  dlogits.exp = -7;
}

int64_t count_correct(const QTensor& logits, const uint8_t* labels) {
  const int64_t rows = logits.shape[0], classes = logits.shape[1];
  int64_t correct = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const int8_t* m = logits.data + i * classes;
    int64_t best = 0;
    for (int64_t j = 1; j < classes; ++j)
      if (m[j] > m[best]) best = j;
    correct += best == labels[i];
  }
  return correct;
}

}  // namespace zotrain::int8
