#include "nn/loss.h"

#include <cmath>
#include <string>

#include "zotrain/core/error.h"

namespace zotrain {

namespace {

// One row's loss, with what its gradient needs.
struct RowLoss {
  double loss, max, log_sum;
  int64_t argmax;  // the first maximal logit
};

RowLoss row_loss(const float* z, int64_t classes, int64_t label, int64_t r) {
  if (label >= classes)
    ZT_THROW(InputError("label " + std::to_string(label) + " of row " + std::to_string(r) +
                        " is out of range for " + std::to_string(classes) + " classes"));
  int64_t argmax = 0;
  for (int64_t c = 1; c < classes; ++c)
    if (z[c] > z[argmax]) argmax = c;
  // z - max <= 0, so no exponential overflows and the largest term is exactly 1.
  const double max = z[argmax];
  double sum = 0.0;
  for (int64_t c = 0; c < classes; ++c) sum += std::exp(z[c] - max);
  const double log_sum = std::log(sum);
  return {log_sum - (z[label] - max), max, log_sum, argmax};
}

}  // namespace

void softmax_cross_entropy_rows(const Tensor& logits, const uint8_t* labels, double* out) {
  const int64_t rows = logits.shape()[0];
  const int64_t classes = logits.shape().row_numel();
  for (int64_t r = 0; r < rows; ++r) {
    const RowLoss l = row_loss(logits.data() + r * classes, classes, labels[r], r);
    out[2 * r] = l.loss;
    out[2 * r + 1] = l.argmax == labels[r] ? 1.0 : 0.0;
  }
}

float mean_row_loss(const double* pairs, int64_t rows) {
  double total = 0.0;
  for (int64_t r = 0; r < rows; ++r) total += pairs[2 * r];
  return rows ? static_cast<float>(total / static_cast<double>(rows)) : 0.0f;
}

float softmax_cross_entropy(const Tensor& logits, const uint8_t* labels, Tensor* dlogits,
                            int64_t* correct) {
  const int64_t rows = logits.shape()[0];
  const int64_t classes = logits.shape().row_numel();
  const bool want_grad = dlogits && !dlogits->empty();
  double total = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* z = logits.data() + r * classes;
    const int64_t label = labels[r];
    const RowLoss l = row_loss(z, classes, label, r);
    if (correct && l.argmax == label) ++*correct;
    total += l.loss;
    if (want_grad) {
      float* g = dlogits->data() + r * classes;
      for (int64_t c = 0; c < classes; ++c)
        g[c] = static_cast<float>((std::exp(z[c] - l.max - l.log_sum) - (c == label ? 1.0 : 0.0)) /
                                  static_cast<double>(rows));
    }
  }
  return rows ? static_cast<float>(total / static_cast<double>(rows)) : 0.0f;
}

}  // namespace zotrain
