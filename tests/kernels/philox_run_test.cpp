#include "kernels/philox_run.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/kernel_isas.h"
#include "zotrain/core/rng.h"

namespace zotrain {
namespace {

// Every instruction set's runs against philox4x32 block by block: runs of any length (the 8-
// and 16-block groups of the 256- and 512-bit kernels, and the rest), counters whose low word
// wraps inside a group.
TEST(PhiloxRun, EqualsOneBlockAtATime) {
  test::for_each_kernel_isa([] {
    for (uint64_t j0 : {uint64_t{0}, uint64_t{5}, (uint64_t{1} << 32) - 3, uint64_t{0x1234567890}})
      for (int64_t blocks : {0, 1, 4, 7, 8, 9, 12, 15, 16, 17, 23, 24, 33, 64}) {
        SCOPED_TRACE(::testing::Message() << "j0 " << j0 << " blocks " << blocks);
        const uint64_t key = 0xDEADBEEF12345678u + j0;
        std::vector<uint32_t> out(4 * blocks + 1, 0xABCDu);
        kernels::philox4x32_run(j0, 7, 0x5A4F, key, blocks, out.data());
        for (int64_t b = 0; b < blocks; ++b) {
          const uint64_t j = j0 + static_cast<uint64_t>(b);
          const Philox4x32 want = philox4x32(
              {static_cast<uint32_t>(j), static_cast<uint32_t>(j >> 32), 7, 0x5A4F}, key);
          for (int w = 0; w < 4; ++w) ASSERT_EQ(out[4 * b + w], want[w]) << b << " word " << w;
        }
        EXPECT_EQ(out[4 * blocks], 0xABCDu);  // nothing written past the run
      }
  });
}

}  // namespace
}  // namespace zotrain
