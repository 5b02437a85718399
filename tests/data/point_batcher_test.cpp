#include "data/point_batcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "data/data_test_util.h"
#include "data/point_test_util.h"

namespace zotrain {
namespace {

using testing::HasSubstr;

// 10 clouds of 16 random points (labels i % 3).
PointCloudSet random_set() {
  PointCloudSet s = test::make_clouds(10, 16, 3);
  Rng rng(1, 0);
  for (float& v : s.points) v = rng.uniform(-2, 3);
  return s;
}

std::vector<float> batch(const PointBatcher& b, int64_t index, std::vector<uint8_t>* labels) {
  std::vector<float> x(size_t(b.rows(index) * 3 * b.item_shape()[2]));
  labels->resize(size_t(b.rows(index)));
  EXPECT_EQ(b.fill(index, x.data(), labels->data()), b.rows(index));
  return x;
}

TEST(PointBatcher, EvaluationIsFileOrderFirstPointsNormalizedChannelsFirst) {
  const PointCloudSet s = random_set();
  PointBatcher b(s, 4, 8, false, 0);
  EXPECT_EQ(b.item_shape(), (Shape{3, 1, 8}));
  EXPECT_EQ(b.batches_per_epoch(), 3);
  EXPECT_EQ(b.rows(2), 2);
  std::vector<uint8_t> labels;
  std::vector<float> x = batch(b, 1, &labels);
  EXPECT_EQ(labels, (std::vector<uint8_t>{4 % 3, 5 % 3, 6 % 3, 7 % 3}));
  // Row 0 is cloud 4: its first 8 points, normalized, transposed to [3, 8].
  std::vector<float> want(s.cloud(4), s.cloud(4) + 24);
  normalize_unit_sphere(want.data(), 8);
  for (int64_t p = 0; p < 8; ++p)
    for (int d = 0; d < 3; ++d) ASSERT_EQ(x[d * 8 + p], want[p * 3 + d]) << p << "," << d;
}

TEST(PointBatcher, TrainingIsSeededPerEpochAndExample) {
  const PointCloudSet s = random_set();
  PointBatcher a(s, 4, 8, true, 7), b(s, 4, 8, true, 7);
  std::vector<uint8_t> la, lb;
  EXPECT_EQ(batch(a, 2, &la), batch(b, 2, &lb));  // any batch refills exactly
  EXPECT_EQ(la, lb);
  std::vector<float> first = batch(a, 0, &la);
  a.start_epoch(1);
  EXPECT_NE(batch(a, 0, &la), first);
  // Example 0 in epoch 1 gets the same points whichever batch it lands in: compare with a
  // batcher of one-example batches.
  PointBatcher one(s, 1, 8, true, 7);
  one.start_epoch(1);
  for (int64_t r = 0; r < a.rows(0); ++r) {
    const int64_t ex = a.order().example(0, r);
    int64_t index = 0;
    while (one.order().example(index, 0) != ex) ++index;
    std::vector<float> all = batch(a, 0, &la), single = batch(one, index, &lb);
    EXPECT_TRUE(std::equal(single.begin(), single.end(), all.begin() + r * 24)) << ex;
  }
}

TEST(PointBatcher, TrainingAugmentsWithinTheUnitSphere) {
  const PointCloudSet s = random_set();
  PointAugmentation aug;
  aug.jitter_sigma = 0.01f, aug.jitter_clip = 0.02f;
  PointBatcher b(s, 10, 16, true, 3, aug), plain(s, 10, 16, false, 3);
  std::vector<uint8_t> l;
  std::vector<float> x = batch(b, 0, &l), y = batch(plain, 0, &l);
  EXPECT_NE(x, y);
  for (int64_t r = 0; r < 10; ++r)
    for (int64_t p = 0; p < 16; ++p) {
      const float* c = &x[r * 48];
      const double norm = std::sqrt(c[p] * c[p] + c[16 + p] * c[16 + p] + c[32 + p] * c[32 + p]);
      ASSERT_LE(norm, 1 + 0.02 * std::sqrt(3.0) + 1e-5);
    }
}

TEST(PointBatcher, BadSizes) {
  const PointCloudSet s = random_set();
  EXPECT_THAT(test::input_error([&] { PointBatcher(s, 4, 17, false, 0); }),
              HasSubstr("cannot sample 17 points of a cloud of 16"));
  EXPECT_THAT(test::input_error([&] { PointBatcher(s, 0, 8, false, 0); }),
              HasSubstr("batch size is 0"));
}

}  // namespace
}  // namespace zotrain
