#include "zotrain/core/rng.h"

#include <cmath>

namespace zotrain {

Philox4x32 philox4x32(Philox4x32 c, uint64_t key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kM0) * c[0];
    uint64_t p1 = static_cast<uint64_t>(kM1) * c[2];
    uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c = {hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0};
    k0 += kW0;
    k1 += kW1;
  }
  return c;
}

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
