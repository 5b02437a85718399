// NITI's integer tensor: value = m · 2^exp with int8 mantissas |m| <= 127 and one power-of-two
// exponent for the whole tensor. Like Tensor, a QTensor views storage it does not own (an Arena).
// Floats appear only at the boundary: quantize() for inputs and init, dequantize() for reports.
#pragma once

#include <cstdint>

#include "zotrain/core/shape.h"

namespace zotrain {

struct QTensor {
  int8_t* data = nullptr;
  Shape shape;
  int exp = 0;

  int64_t numel() const { return shape.numel(); }
  // Rows [begin, end) of the outermost dimension, same exponent.
  QTensor rows(int64_t begin, int64_t end) const {
    QTensor q = *this;
    q.data = data + begin * shape.row_numel();
    q.shape = shape.with_batch(end - begin);
    return q;
  }
  QTensor view(const Shape& s) const { return {data, s, exp}; }
};

// NITI's float-to-int8 conversion: range = ceil(log2 max|x|), exp = range - 7,
// m = round(x · 2^-exp) clipped to ±127 (0 and exp 0 for all-zero x), halves to even as NITI's
// torch.round (the integer shifts round halves away from zero). Returns exp.
int quantize(const float* x, int64_t n, int8_t* m);
// quantize() for values that come one at a time: the exponent of a tensor whose largest
// magnitude is `amax`, and a value's mantissa at that exponent.
int quantize_exponent(float amax);
int8_t quantize_mantissa(float x, int exp);
// x = m · 2^exp.
void dequantize(const int8_t* m, int64_t n, int exp, float* x);

}  // namespace zotrain
