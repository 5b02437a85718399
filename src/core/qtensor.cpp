#include "zotrain/core/qtensor.h"

#include <cmath>

namespace zotrain {

int quantize_exponent(float amax) {
  if (amax == 0) return 0;
  int e2 = 0;
  const float frac = std::frexp(amax, &e2);  // amax = frac · 2^e2, frac in [0.5, 1)
  const int range = frac == 0.5f ? e2 - 1 : e2;
  return range - 7;
}

int8_t quantize_mantissa(float x, int exp) {
  const float v = std::nearbyint(std::ldexp(x, -exp));
  return static_cast<int8_t>(std::fmin(std::fmax(v, -127.0f), 127.0f));
}

int quantize(const float* x, int64_t n, int8_t* m) {
  float amax = 0;
  for (int64_t i = 0; i < n; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  const int exp = quantize_exponent(amax);
  for (int64_t i = 0; i < n; ++i) m[i] = quantize_mantissa(x[i], exp);
  return exp;
}

void dequantize(const int8_t* m, int64_t n, int exp, float* x) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::ldexp(static_cast<float>(m[i]), exp);
}

}  // namespace zotrain
