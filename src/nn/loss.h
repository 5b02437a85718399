// Losses on logits [rows, classes].
#pragma once

#include <cstdint>

#include "zotrain/core/tensor.h"

namespace zotrain {

// Mean softmax cross-entropy over the rows of logits [rows, classes], labels[r] < classes.
// Numerically stable: each row's log-sum-exp is taken after subtracting the row maximum, and the
// exponentials are summed in double, so logits of any magnitude (±1e4 and beyond) give a finite
// loss and a gradient accurate to float precision.
// When dlogits is non-null and non-empty, writes dL/dlogits = (softmax - onehot) / rows into it.
// When correct is non-null, ADDS the number of rows whose first maximal logit is the label, so
// that a caller can count over many batches.
// Throws InputError for a label >= classes.
float softmax_cross_entropy(const Tensor& logits, const uint8_t* labels, Tensor* dlogits,
                            int64_t* correct);

// The same loss in two steps, for rows computed apart (a distributed batch): each row's loss and
// whether it is classified right, as (loss, 0 or 1) pairs in `out`; then the mean of such pairs
// over `rows` rows, the bits softmax_cross_entropy gives for those rows at once.
void softmax_cross_entropy_rows(const Tensor& logits, const uint8_t* labels, double* out);
float mean_row_loss(const double* pairs, int64_t rows);

}  // namespace zotrain
