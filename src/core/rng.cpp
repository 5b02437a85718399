#include "zotrain/core/rng.h"

#include <cmath>

namespace zotrain {

uint32_t Rng::next_u32() {
  if (used_ == 4) {
    words_ = philox4x32({static_cast<uint32_t>(block_), static_cast<uint32_t>(block_ >> 32),
                         static_cast<uint32_t>(stream_), static_cast<uint32_t>(stream_ >> 32)},
                        seed_);
    ++block_;
    used_ = 0;
  }
  return words_[used_++];
}

float Rng::uniform() {
  return u32_to_unit(next_u32());
}

float Rng::uniform(float lo, float hi) {
  return lo + (hi - lo) * uniform();
}

float Rng::normal() {
  float u1 = u32_to_unit_open0(next_u32());
  float u2 = u32_to_unit(next_u32());
  return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.28318530717958647692f * u2);
}

uint32_t Rng::below(uint32_t n) {
  // Rejection from the top of the range keeps every value equally likely.
  uint32_t limit = UINT32_MAX - UINT32_MAX % n;
  uint32_t u;
  do u = next_u32();
  while (u >= limit);
  return u % n;
}

}  // namespace zotrain
