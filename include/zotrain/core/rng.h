// Counter-based random numbers (Philox-4x32-10, Salmon et al. 2011). A random word is a pure
// function of (key, counter), so the same numbers come out on any thread count, platform or
// process — what seed replay and reproducible parallel runs rest on.
#pragma once

#include <array>
#include <cstdint>

namespace zotrain {

using Philox4x32 = std::array<uint32_t, 4>;

// One Philox-4x32-10 block: 4 random words for a 128-bit counter and a 64-bit key.
Philox4x32 philox4x32(Philox4x32 counter, uint64_t key);

// Philox-4x32's round multipliers and key increments (Salmon et al.).
inline constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;

// A uniform float in [0, 1) from the high 24 bits of a word.
inline float u32_to_unit(uint32_t u) {
  return static_cast<float>(u >> 8) * 0x1p-24f;
}
// A uniform float in (0, 1], safe for log().
inline float u32_to_unit_open0(uint32_t u) {
  return static_cast<float>((u >> 8) + 1) * 0x1p-24f;
}

// A sequential generator over one Philox stream, for initialization, shuffling and splits.
// Its output is fixed by (seed, stream) alone.
class Rng {
 public:
  Rng(uint64_t seed, uint64_t stream) : seed_(seed), stream_(stream) {}

  uint32_t next_u32();
  float uniform();                    // [0, 1)
  float uniform(float lo, float hi);  // [lo, hi)
  float normal();                     // N(0, 1), Box-Muller
  uint32_t below(uint32_t n);         // uniform integer in [0, n), unbiased

 private:
  uint64_t seed_, stream_;
  uint64_t block_ = 0;
  Philox4x32 words_{};
  int used_ = 4;
};

}  // namespace zotrain
