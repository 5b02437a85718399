// The float-to-integer step of the sparsity schedule, kept out of ternary.cpp, which must compile
// without floating point.
#include <cmath>

#include "zo/ternary.h"

namespace zotrain::zo {

uint32_t zero_threshold(double p_zero) {
  // (w >> 8) · 2^-24 < p  <=>  (w >> 8) < ceil(p · 2^24) for the integer w >> 8, with p rounded
  // to float first as PerturbationSpec::p_zero is, so that both paths draw the same z.
  const double t = std::ceil(static_cast<double>(static_cast<float>(p_zero)) * 16777216.0);
  return t <= 0 ? 0 : (t >= 16777216.0 ? 16777216u : static_cast<uint32_t>(t));
}

uint32_t move_threshold(uint32_t zero_threshold, double fraction) {
  const double kept = std::round(fraction * (16777216.0 - zero_threshold));
  return 16777216u - static_cast<uint32_t>(kept);
}

}  // namespace zotrain::zo
