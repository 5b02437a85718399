// Integer cross-entropy on int8 logits z = m · 2^exp, in base 2: logits are rescaled by
// 47274 / 2^15 ≈ log2(e) to s = z · log2(e) in units of 2^-frac_bits, exponentials are powers of
// two by shifts (with Mitchell's linear interpolation between them when frac_bits > 0) and the
// log of the sum is its top bit position (plus Mitchell's mantissa fraction when frac_bits > 0).
// frac_bits = 0 is ElasticZO-INT8's Eq. 12: every term floored to whole bits. Integer only.
#pragma once

#include <cstdint>

#include "zotrain/core/qtensor.h"

namespace zotrain::int8 {

// The loss of each row, in units of 2^-frac_bits bits (1 bit = ln 2 nats), summed over the rows
// of `logits` [rows, classes]. frac_bits in [0, 16].
int64_t cross_entropy(const QTensor& logits, const uint8_t* labels, int frac_bits);

// The fraction bits of the softmax that cross_entropy_grad uses.
inline constexpr int kGradFracBits = 8;

// dL/dlogits = softmax(z) - onehot(label) as int8 mantissas with exp -7 (each value times 2^7,
// rounded), NITI's integer loss gradient. dlogits has the shape of logits.
void cross_entropy_grad(const QTensor& logits, const uint8_t* labels, QTensor& dlogits);

// Rows whose largest logit (first one on ties) is at the label.
int64_t count_correct(const QTensor& logits, const uint8_t* labels);

}  // namespace zotrain::int8
