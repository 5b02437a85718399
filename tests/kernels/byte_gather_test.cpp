#include "kernels/byte_gather.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernel_isas.h"
#include "zotrain/core/rng.h"

namespace zotrain {
namespace {

using kernels::kByteKept;
using kernels::kByteZero;

// A random rearrangement of dst_bytes bytes from src_bytes: runs of kept bytes between written
// runs of every length (1 to past 16, so partial chunks, whole ones and overlapping last ones),
// each written byte a zero or any source byte, in order (a plane's rows), backwards or scattered.
std::vector<int64_t> random_from(int64_t dst_bytes, int64_t src_bytes, Rng& rng) {
  std::vector<int64_t> from(static_cast<size_t>(dst_bytes), kByteKept);
  const int pattern = static_cast<int>(rng.below(3));
  int64_t next = static_cast<int64_t>(rng.below(static_cast<uint32_t>(src_bytes)));
  for (int64_t d = 0; d < dst_bytes;) {
    d += rng.below(4);  // kept
    const int64_t run = 1 + rng.below(40);
    for (int64_t j = 0; j < run && d < dst_bytes; ++j, ++d) {
      if (rng.below(5) == 0) {
        from[d] = kByteZero;
        continue;
      }
      if (pattern == 0) next = (next + 1 + rng.below(2)) % src_bytes;
      if (pattern == 1) next = (next + src_bytes - 1) % src_bytes;
      if (pattern == 2) next = rng.below(static_cast<uint32_t>(src_bytes));
      from[d] = next;
    }
  }
  return from;
}

// Every plan moves what it says in every kernel set, on several planes at strides: written
// bytes from their source, kept bytes untouched, and no byte read outside the source (the
// source vectors are exactly src_bytes long, which the sanitizers check).
TEST(ByteGather, PlansMoveTheBytesTheySayInEverySet) {
  test::for_each_kernel_isa([] {
    Rng rng(21, 3);
    for (int trial = 0; trial < 300; ++trial) {
      const int64_t src_bytes = 1 + rng.below(trial % 2 ? 15 : 200);
      const int64_t dst_bytes = 1 + rng.below(120);
      const std::vector<int64_t> from = random_from(dst_bytes, src_bytes, rng);
      const kernels::BytePlan plan = kernels::plan_bytes(from, src_bytes);
      EXPECT_EQ(plan.wide, src_bytes >= 16);
      constexpr int64_t kPlanes = 3;
      const int64_t dst_stride = dst_bytes + rng.below(5);
      std::vector<int8_t> src(static_cast<size_t>(kPlanes * src_bytes));
      for (auto& b : src) b = static_cast<int8_t>(rng.below(256));
      std::vector<int8_t> dst(static_cast<size_t>(kPlanes * dst_stride), 77), want = dst;
      for (int64_t i = 0; i < kPlanes; ++i)
        for (int64_t d = 0; d < dst_bytes; ++d)
          if (from[d] != kByteKept)
            want[i * dst_stride + d] = from[d] == kByteZero ? 0 : src[i * src_bytes + from[d]];
      // The last plane alone, so that a load past its end would leave the vector.
      kernels::gather_bytes(plan, kPlanes - 1, src.data(), src_bytes, dst.data(), dst_stride);
      kernels::gather_bytes(plan, 1, src.data() + (kPlanes - 1) * src_bytes, 0,
                            dst.data() + (kPlanes - 1) * dst_stride, 0);
      ASSERT_EQ(dst, want) << "trial " << trial << ": " << src_bytes << " -> " << dst_bytes;
    }
  });
}

// Runs of 16 bytes and more are whole chunks, the last one overlapping; a shorter run is one
// partial chunk; windows are padded to the same number per chunk of a length.
TEST(ByteGather, ChunksCoverRunsWithoutWritingPastThem) {
  std::vector<int64_t> from(40, kByteKept);
  for (int64_t d = 0; d < 20; ++d) from[d] = d;       // 16 + 4: two chunks, at 0 and 4
  for (int64_t d = 25; d < 30; ++d) from[d] = 2 * d;  // 5 bytes: a partial chunk
  const kernels::BytePlan plan = kernels::plan_bytes(from, 64);
  ASSERT_EQ(plan.groups.size(), 2u);
  const auto& whole = plan.groups[0];
  EXPECT_EQ(whole.bytes, 16);
  ASSERT_EQ(whole.windows.size(), 2u * whole.per_chunk);
  EXPECT_EQ(whole.windows[0].dst, 0);
  EXPECT_EQ(whole.windows[whole.per_chunk].dst, 4);
  const auto& partial = plan.groups[1];
  EXPECT_EQ(partial.bytes, 5);
  EXPECT_EQ(partial.windows[0].dst, 25);
}

}  // namespace
}  // namespace zotrain
