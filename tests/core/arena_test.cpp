#include "zotrain/core/arena.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "zotrain/core/error.h"

namespace zotrain {
namespace {

TEST(Arena, RecordsAlignedBytesPerBucket) {
  Arena arena;
  Tensor a = arena.alloc(Bucket::kParameters, Shape{3, 5});  // 60 bytes -> 64
  Tensor b = arena.alloc(Bucket::kActivations, Shape{100});  // 400 bytes -> 448
  arena.alloc(Bucket::kParameters, Shape{16});               // 64 bytes
  EXPECT_EQ(arena.bytes(Bucket::kParameters), 128u);
  EXPECT_EQ(arena.bytes(Bucket::kActivations), 448u);
  EXPECT_EQ(arena.bytes(Bucket::kGradients), 0u);
  EXPECT_EQ(arena.total_bytes(), 576u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % kAlignment, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % kAlignment, 0u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(b[i], 0.0f);
}

TEST(Tensor, ViewsShareStorage) {
  Tensor t = Tensor::zeros(Shape{4, 2, 3});
  for (int i = 0; i < 24; ++i) t[i] = static_cast<float>(i);
  Tensor r = t.rows(1, 3);
  EXPECT_EQ(r.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(r[0], 6.0f);
  Tensor v = r.view(Shape{2, 6});
  v[1] = -1.0f;
  EXPECT_EQ(t[7], -1.0f);
  Tensor c = t.clone();
  c[0] = 5.0f;
  EXPECT_EQ(t[0], 0.0f);
}

// A fixed region (the device's static arena): blocks in order, 64-byte aligned, counted per
// bucket, zero-filled; one that does not fit is an error naming the sizes.
TEST(Arena, FixedRegionHandsOutBlocksInOrderAndRefusesOverflow) {
  alignas(64) static unsigned char region[256];
  std::memset(region, 0xff, sizeof region);
  Arena arena(region, sizeof region);
  auto* a = static_cast<unsigned char*>(arena.alloc_bytes(Bucket::kParameters, 10));
  auto* b = static_cast<unsigned char*>(arena.alloc_bytes(Bucket::kInput, 100));
  EXPECT_EQ(a, region);
  EXPECT_EQ(b, region + 64);
  EXPECT_EQ(b[99], 0);
  EXPECT_EQ(arena.bytes(Bucket::kParameters), 64u);
  EXPECT_EQ(arena.bytes(Bucket::kInput), 128u);
  try {
    arena.alloc_bytes(Bucket::kWorkspace, 65);
    FAIL() << "a block past the region's end was handed out";
  } catch (const RuntimeError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("region of 256 bytes is full: 128 more bytes"));
  }
  EXPECT_NE(arena.alloc_bytes(Bucket::kWorkspace, 64), nullptr);
}

}  // namespace
}  // namespace zotrain
