// Philox-4x32-10 on its own: integer arithmetic only, so the integer training step may call it
// (this file is compiled with floating point disabled as well, see CMakeLists.txt).
#include "zotrain/core/rng.h"

namespace zotrain {

Philox4x32 philox4x32(Philox4x32 c, uint64_t key) {
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * c[0];
    uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * c[2];
    uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c = {hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0};
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  return c;
}

}  // namespace zotrain
