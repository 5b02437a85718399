#include "zotrain/core/arena.h"

#include <gtest/gtest.h>

#include <cstdint>

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

}  // namespace
}  // namespace zotrain
