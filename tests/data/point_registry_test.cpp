#include "zotrain/data/point_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "data/data_test_util.h"
#include "data/point_test_util.h"
#include "test_util.h"

namespace zotrain {
namespace {

namespace fs = std::filesystem;
using test::cloud_id;
using test::data_options;
using test::input_error;
using testing::HasSubstr;

std::vector<int64_t> ids(const PointCloudSet& s) {
  return test::ids_of(s.size(), [&](int64_t i) { return cloud_id(s.cloud(i)); });
}

// ZOTRAIN_DATA points at a temp folder holding a generated modelnet40-standin/: train files of 6
// and 4 clouds, one test file of 5, 8 points each, 4 classes.
class PointRegistry : public testing::Test {
 protected:
  void SetUp() override {
    ZT_REQUIRE_HDF5();
    test::write_point_folder(dir_, {6, 4}, {5}, 8, 4);
  }

  test::TempDir tmp_;
  test::ScopedEnv env_{"ZOTRAIN_DATA", tmp_.path().string()};
  fs::path dir_ = tmp_.path() / "modelnet40-standin";
};

TEST_F(PointRegistry, ConcatenatesTheListedFilesAndSplits) {
  PointSplits s = load_point_data("modelnet40-standin", data_options(3, 1));
  EXPECT_EQ(s.train.size(), 7);
  EXPECT_EQ(s.val.size(), 3);
  EXPECT_EQ(s.test.size(), 5);
  for (const PointCloudSet* d : {&s.train, &s.val, &s.test}) {
    EXPECT_EQ(d->name, "modelnet40-standin");
    EXPECT_EQ(d->points_per_cloud, 8);
    EXPECT_EQ(d->num_classes, 4);
    for (int64_t i = 0; i < d->size(); ++i)  // labels travel with their clouds
      ASSERT_EQ(d->labels[i], cloud_id(d->cloud(i)) % 4);
  }
  std::vector<int64_t> all = ids(s.train), val = ids(s.val);
  all.insert(all.end(), val.begin(), val.end());
  std::sort(all.begin(), all.end());
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(all[i], i);  // both training files, each cloud once
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(cloud_id(s.test.cloud(i)), i);  // test: file order
  EXPECT_EQ(ids(load_point_data("modelnet40-standin", data_options(3, 1)).val), ids(s.val));
}

TEST_F(PointRegistry, ModelNet40IsItsDistributedFolderAndPathsWork) {
  test::write_point_folder(tmp_.path() / "modelnet40_ply_hdf5_2048", {4}, {2}, 5, 40);
  EXPECT_EQ(resolve_point_data_dir("modelnet40"),
            (tmp_.path() / "modelnet40_ply_hdf5_2048").string());
  PointSplits s = load_point_data("modelnet40", data_options(1, 0));
  EXPECT_EQ(s.train.num_classes, 40);  // shape_names.txt, not the labels present
  EXPECT_EQ(load_point_data(dir_.string(), data_options(0, 0)).train.size(), 10);
}

TEST_F(PointRegistry, ClassesFromLabelsWithoutShapeNames) {
  fs::remove(dir_ / "shape_names.txt");
  EXPECT_EQ(load_point_data("modelnet40-standin", data_options(0, 0)).train.num_classes, 4);
  write_point_h5((dir_ / "ply_data_test0.h5").string(), test::make_clouds(1, 8, 9, 6));
  std::string msg = input_error([&] { load_point_data("modelnet40-standin", data_options(0, 0)); });
  EXPECT_THAT(msg, HasSubstr((dir_ / "ply_data_test0.h5").string() +
                             ": dataset 'label' holds 6 at cloud 0; expected 0 to 3"));
}

TEST_F(PointRegistry, LabelBeyondShapeNames) {
  test::write_text(dir_ / "shape_names.txt", "a\nb\nc\n");
  std::string msg = input_error([&] { load_point_data("modelnet40-standin", {}); });
  EXPECT_THAT(msg, HasSubstr((dir_ / "ply_data_train0.h5").string() +
                             ": dataset 'label' holds 3 at cloud 3; expected 0 to 2 (3 classes, " +
                             "from " + (dir_ / "shape_names.txt").string()));
}

TEST_F(PointRegistry, BadListsAndFiles) {
  test::write_text(dir_ / "test_files.txt", "ply_data_test0.h5\r\nnowhere/ply_data_test7.h5\n");
  EXPECT_THAT(input_error([&] { load_point_data("modelnet40-standin", {}); }),
              HasSubstr((dir_ / "test_files.txt").string() +
                        ": line 2 names 'nowhere/ply_data_test7.h5', found neither"));
  test::write_text(dir_ / "test_files.txt", "\n");
  EXPECT_THAT(input_error([&] { load_point_data("modelnet40-standin", {}); }),
              HasSubstr((dir_ / "test_files.txt").string() + ": lists no files"));
  test::write_text(dir_ / "test_files.txt", "ply_data_test0.h5\n");
  write_point_h5((dir_ / "ply_data_train1.h5").string(), test::make_clouds(2, 9, 4));
  EXPECT_THAT(input_error([&] { load_point_data("modelnet40-standin", {}); }),
              HasSubstr((dir_ / "ply_data_train1.h5").string() +
                        ": dataset 'data' has 9 points per cloud; expected 8"));
  fs::remove(dir_ / "train_files.txt");
  EXPECT_THAT(input_error([&] { load_point_data(dir_.string(), {}); }),
              HasSubstr(dir_.string() + ": data folder lacks train_files.txt"));
}

TEST_F(PointRegistry, NamesOfTheWrongKind) {
  EXPECT_THAT(input_error([&] { load_point_data("mnist", {}); }),
              HasSubstr("unknown point-cloud data set 'mnist': known names are modelnet40, "
                        "modelnet40-standin"));
  EXPECT_THAT(input_error([&] { load_data("modelnet40-standin", {}); }),
              HasSubstr("data set 'modelnet40-standin' holds point clouds, not images"));
  fs::remove_all(dir_);
  for (const auto& dir : data_search_dirs())
    if (fs::exists(fs::path(dir) / "modelnet40-standin")) return;  // generated there by setup
  EXPECT_THAT(input_error([&] { load_point_data("modelnet40-standin", {}); }),
              HasSubstr("data set 'modelnet40-standin' not found"));
}

// The stand-in as scripts/setup.sh generates it (CI runs setup): the defaults' sizes.
TEST(PointRegistryReal, GeneratedStandin) {
  ZT_REQUIRE_HDF5();
  try {
    resolve_point_data_dir("modelnet40-standin");
  } catch (const InputError&) {
    if (std::getenv("ZOTRAIN_REQUIRE_DATA")) FAIL() << "modelnet40-standin is not generated";
    GTEST_SKIP() << "modelnet40-standin is not generated (run scripts/setup.sh)";
  }
  // The image sets' default of 5000 held out is more than the stand-in's 3000 training clouds.
  PointSplits s = load_point_data("modelnet40-standin", DataOptions{300, 0, 0});
  EXPECT_EQ(s.val.size(), 300);
  EXPECT_EQ(s.train.size() + s.val.size(), 3000);
  EXPECT_EQ(s.test.size(), 750);
  EXPECT_EQ(s.train.points_per_cloud, 2048);
  EXPECT_EQ(s.train.num_classes, 10);
}

}  // namespace
}  // namespace zotrain
