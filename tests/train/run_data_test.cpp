#include "zotrain/train/run_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "data/modelnet_standin.h"
#include "data/point_test_util.h"
#include "test_util.h"
#include "zotrain/core/error.h"

namespace zotrain {
namespace {

PointSplits small_clouds() {
  PointSplits s;
  s.train = test::make_clouds(10, 8, 3);
  s.val = test::make_clouds(2, 8, 3, 10);
  s.test = test::make_clouds(5, 8, 3, 20);
  for (PointCloudSet* set : {&s.train, &s.val, &s.test}) set->num_classes = 3;
  return s;
}

TEST(RunData, PointCloudsAreSampledChannelsFirstAndQuantizedIntoTheUnitSphere) {
  RunData data(small_clouds(), 6);
  EXPECT_TRUE(data.is_point_cloud());
  EXPECT_EQ(data.item_shape(), (Shape{3, 1, 6}));
  EXPECT_EQ(data.num_classes(), 3);
  EXPECT_EQ(data.size(Split::kTrain), 10);
  EXPECT_EQ(data.size(Split::kVal), 2);
  EXPECT_EQ(data.size(Split::kTest), 5);
  EXPECT_EQ(data.int8_exp(), -7);
  auto test = data.batches(Split::kTest, 4, false, 0);
  test->start_epoch(0);
  ASSERT_EQ(test->batches_per_epoch(), 2);
  std::vector<float> x(4 * 18);
  std::vector<int8_t> q(4 * 18);
  std::vector<uint8_t> labels(4), qlabels(4);
  ASSERT_EQ(test->fill(1, x.data(), labels.data()), 1);  // the fifth cloud alone
  ASSERT_EQ(test->fill(1, q.data(), qlabels.data()), 1);
  EXPECT_EQ(labels[0], 24 % 3);
  EXPECT_EQ(qlabels[0], labels[0]);
  for (int i = 0; i < 18; ++i) {
    EXPECT_LE(std::fabs(x[i]), 1.0f + 1e-6f);
    EXPECT_EQ(q[i], static_cast<int8_t>(std::lround(x[i] * 128.0f > 127 ? 127 : x[i] * 128.0f)))
        << i;
  }
  EXPECT_THROW(RunData(small_clouds(), 9), InputError);  // more points than the clouds have
}

TEST(RunData, ImagesAreNormalizedByTheTrainingSplit) {
  DataSplits s;
  s.train = Dataset{"x", Shape{1, 2, 2}, {0, 255, 0, 255, 0, 0, 0, 0}, {0, 1}, 2};
  s.test = s.train;
  RunData data(s);
  EXPECT_FALSE(data.is_point_cloud());
  EXPECT_EQ(data.item_shape(), (Shape{1, 2, 2}));
  EXPECT_NEAR(data.normalization().mean, 0.25, 1e-6);
  auto train = data.batches(Split::kTest, 2, false, 0);
  std::vector<float> x(8);
  std::vector<int8_t> q(8);
  train->fill(0, x.data(), nullptr);
  train->fill(0, q.data(), nullptr);
  for (int i = 0; i < 8; ++i)
    EXPECT_NEAR(std::ldexp(static_cast<float>(q[i]), data.int8_exp()), x[i], 0.02) << i;
  data.set_normalization({0.5f, 0.5f});
  train = data.batches(Split::kTest, 2, false, 0);
  train->fill(0, x.data(), nullptr);
  EXPECT_FLOAT_EQ(x[1], 1.0f);
}

TEST(RunData, LoadTellsPointCloudFoldersFromImageFolders) {
  ZT_REQUIRE_HDF5();
  test::TempDir dir;
  StandinOptions o;
  o.train_per_class = 2, o.test_per_class = 1, o.points = 16;
  write_modelnet40_standin(dir.file("clouds"), o);
  RunData clouds = RunData::load(dir.file("clouds"), {4, 0, 1}, 8);
  EXPECT_TRUE(clouds.is_point_cloud());
  EXPECT_EQ(clouds.num_classes(), 10);
  EXPECT_EQ(clouds.size(Split::kTrain), 16);
  EXPECT_THROW(RunData::load(dir.file("nothing-here"), {}, 8), InputError);
}

}  // namespace
}  // namespace zotrain
