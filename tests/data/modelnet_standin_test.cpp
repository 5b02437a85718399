#include "data/modelnet_standin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "data/data_test_util.h"
#include "test_util.h"
#include "zotrain/data/point_registry.h"

namespace zotrain {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;

StandinOptions small(int64_t clouds_per_file) {
  StandinOptions o;
  o.train_per_class = 3;
  o.test_per_class = 2;
  o.points = 64;
  o.clouds_per_file = clouds_per_file;
  o.seed = 5;
  return o;
}

PointSplits load(const fs::path& dir) {
  return load_point_data(dir.string(), DataOptions{0, 0, 0});
}

TEST(ModelNetStandin, WritesModelNet40sLayoutWithBalancedClasses) {
  ZT_REQUIRE_HDF5();
  test::TempDir tmp;
  write_modelnet40_standin(tmp.file("s"), small(7));
  for (const char* f : {"train_files.txt", "test_files.txt", "shape_names.txt",
                        "ply_data_train0.h5", "ply_data_train4.h5", "ply_data_test2.h5"})
    EXPECT_TRUE(fs::exists(tmp.path() / "s" / f)) << f;
  EXPECT_FALSE(fs::exists(tmp.path() / "s" / "ply_data_train5.h5"));  // 30 clouds in files of 7
  PointSplits s = load(tmp.path() / "s");
  ASSERT_EQ(s.train.size(), 30);
  ASSERT_EQ(s.test.size(), 20);
  EXPECT_EQ(s.train.points_per_cloud, 64);
  EXPECT_EQ(s.train.num_classes, 10);
  std::vector<int> per_class(10);
  for (uint8_t l : s.train.labels) ++per_class[l];
  EXPECT_EQ(per_class, std::vector<int>(10, 3));
  std::vector<uint8_t> first_ten(s.train.labels.begin(), s.train.labels.begin() + 10);
  EXPECT_FALSE(std::is_sorted(first_ten.begin(), first_ten.end()));  // classes interleaved
}

TEST(ModelNetStandin, ReproducibleWhateverTheFileSize) {
  ZT_REQUIRE_HDF5();
  test::TempDir tmp;
  write_modelnet40_standin(tmp.file("a"), small(7));
  write_modelnet40_standin(tmp.file("b"), small(2048));
  StandinOptions other = small(7);
  other.seed = 6;
  write_modelnet40_standin(tmp.file("c"), other);
  PointSplits a = load(tmp.path() / "a"), b = load(tmp.path() / "b"), c = load(tmp.path() / "c");
  EXPECT_EQ(a.train.points, b.train.points);
  EXPECT_EQ(a.test.points, b.test.points);
  EXPECT_EQ(a.train.labels, b.train.labels);
  EXPECT_NE(a.train.points, c.train.points);
}

TEST(ModelNetStandin, CloudsLieInTheUnitSphereAndPlanesAreFlat) {
  const int64_t n = 256;
  std::vector<float> cloud(n * 3);
  for (int cls = 0; cls < 10; ++cls) {
    for (uint64_t seed = 0; seed < 3; ++seed) {
      Rng rng(seed, 0);
      sample_standin_cloud(cls, rng, cloud.data(), n);
      double y_var = 0, r_max = 0;
      for (int64_t i = 0; i < n; ++i) {
        const float* p = &cloud[i * 3];
        r_max = std::max(r_max, std::sqrt(double(p[0]) * p[0] + p[1] * p[1] + p[2] * p[2]));
        y_var += double(p[1]) * p[1] / n;
      }
      EXPECT_LT(r_max, 1.1) << standin_class_names()[cls];  // unit sphere plus noise
      if (standin_class_names()[cls] == "plane")
        EXPECT_LT(std::sqrt(y_var), 0.03) << "seed " << seed;  // only the noise is vertical
      else
        EXPECT_GT(std::sqrt(y_var), 0.1) << standin_class_names()[cls] << " seed " << seed;
    }
  }
}

TEST(ModelNetStandin, BadOptions) {
  test::TempDir tmp;
  StandinOptions o = small(7);
  o.points = 0;
  EXPECT_THAT(test::input_error([&] { write_modelnet40_standin(tmp.file("x"), o); }),
              HasSubstr("stand-in option points is 0; expected 1 to 1048576"));
  // Issue 22, defect 7: counts whose buffers would exhaust the memory.
  o = small(7);
  o.train_per_class = 100000000;
  EXPECT_THAT(test::input_error([&] { write_modelnet40_standin(tmp.file("x"), o); }),
              HasSubstr("train_per_class is 100000000; expected 1 to 1048576"));
  o = small(7);
  o.clouds_per_file = 1 << 20, o.points = 1 << 20;
  EXPECT_THAT(test::input_error([&] { write_modelnet40_standin(tmp.file("x"), o); }),
              HasSubstr("points per file"));
}

}  // namespace
}  // namespace zotrain
