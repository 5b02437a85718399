// The EuroSAT and STL-10 names and folders in the registry (load_data), on generated files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "data/image_test_util.h"
#include "test_util.h"
#include "zotrain/data/registry.h"

namespace zotrain {
namespace {

namespace fs = std::filesystem;
using test::data_options;
using test::input_error;
using testing::HasSubstr;
using testing::Not;

// Image j of class c is one colour that spells (c, j), read back despite JPEG's rounding.
std::vector<uint8_t> colour_of(int c, int j) {
  return {uint8_t(16 * c), uint8_t(16 * j), 128};
}
std::pair<int, int> id_of(const Dataset& ds, int64_t i) {
  const int64_t plane = ds.item_shape[1] * ds.item_shape[2];
  return {(ds.item(i)[0] + 8) / 16, (ds.item(i)[plane] + 8) / 16};
}
std::vector<std::pair<int, int>> ids(const Dataset& ds) {
  std::vector<std::pair<int, int>> out;
  for (int64_t i = 0; i < ds.size(); ++i) out.push_back(id_of(ds, i));
  return out;
}

// Points ZOTRAIN_DATA at a temp folder and writes sets into it.
class ImageSets : public testing::Test {
 protected:
  // Class folders c0, c1, ... holding counts[c] images of 4 x 4, named so that sorting keeps j's
  // order.
  void write_eurosat(const fs::path& dir, const std::vector<int>& counts) {
    for (int c = 0; c < int(counts.size()); ++c) {
      const fs::path cls = dir / ("c" + std::to_string(c));
      fs::create_directories(cls);
      for (int j = 0; j < counts[size_t(c)]; ++j)
        test::write_jpeg((cls / ("img_" + std::string(1, char('a' + j)) + ".jpg")).string(), 3, 4,
                         4, test::constant(colour_of(c, j)));
    }
  }
  // train_X.bin ... test_y.bin with labels 1, 2, ... (cycling through 1..10).
  void write_stl10(const fs::path& dir, int n_train, int n_test) {
    fs::create_directories(dir);
    auto labels = [](int n) {
      std::vector<uint8_t> l;
      for (int i = 0; i < n; ++i) l.push_back(uint8_t(1 + i % 10));
      return l;
    };
    test::write_stl10((dir / "train_X.bin").string(), (dir / "train_y.bin").string(),
                      labels(n_train));
    test::write_stl10((dir / "test_X.bin").string(), (dir / "test_y.bin").string(), labels(n_test));
  }

  test::TempDir tmp_;
  test::ScopedEnv env_{"ZOTRAIN_DATA", tmp_.path().string()};
};

TEST_F(ImageSets, EuroSatHoldsOutAFixedFifthOfEachClassAsTheTestSet) {
  write_eurosat(tmp_.path() / "eurosat" / "2750", {10, 7, 5});
  EXPECT_EQ(resolve_data_dir("eurosat"), (tmp_.path() / "eurosat" / "2750").string());
  DataSplits a = load_data("eurosat", data_options(3, 1));
  for (const Dataset* d : {&a.train, &a.val, &a.test}) {
    EXPECT_EQ(d->name, "eurosat");
    EXPECT_EQ(d->num_classes, 3);
    EXPECT_EQ(d->item_shape, (Shape{3, 4, 4}));
    for (int64_t i = 0; i < d->size(); ++i) EXPECT_EQ(d->labels[i], id_of(*d, i).first);
  }
  // floor(10 / 5) + floor(7 / 5) + floor(5 / 5), in class and file order.
  std::vector<std::pair<int, int>> test = ids(a.test);
  ASSERT_EQ(test.size(), 4u);
  EXPECT_TRUE(std::is_sorted(test.begin(), test.end()));
  EXPECT_EQ(std::count_if(test.begin(), test.end(), [](auto id) { return id.first == 0; }), 2);
  EXPECT_EQ(a.val.size(), 3);
  EXPECT_EQ(a.train.size(), 15);
  // Every image in exactly one split.
  std::vector<std::pair<int, int>> all = ids(a.train), val = ids(a.val);
  all.insert(all.end(), val.begin(), val.end());
  all.insert(all.end(), test.begin(), test.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
  EXPECT_EQ(all.size(), 22u);

  // Another seed moves examples between training and validation, never into the test set.
  DataSplits b = load_data("eurosat", data_options(3, 2));
  EXPECT_EQ(ids(b.test), test);
  EXPECT_NE(ids(b.val), ids(a.val));
  EXPECT_EQ(ids(load_data("eurosat", data_options(3, 1)).val), ids(a.val));
  // train_limit keeps the first training examples; the held-out sets stay.
  DataSplits limited = load_data("eurosat", data_options(3, 1, 5));
  std::vector<std::pair<int, int>> first = ids(a.train);
  first.resize(5);
  EXPECT_EQ(ids(limited.train), first);
  EXPECT_EQ(ids(limited.val), ids(a.val));
  EXPECT_EQ(ids(limited.test), test);
}

TEST_F(ImageSets, EuroSatFolderWithoutTheZipsSubfolderAndByPath) {
  const fs::path dir = tmp_.path() / "eurosat";
  write_eurosat(dir, {5, 5});
  EXPECT_EQ(resolve_data_dir("eurosat"), dir.string());
  DataSplits s = load_data(dir.string(), data_options(2, 0));
  EXPECT_EQ(s.train.name, dir.string());
  EXPECT_EQ(s.test.size(), 2);
  EXPECT_EQ(s.val.size(), 2);
  EXPECT_EQ(s.train.size(), 6);
}

TEST_F(ImageSets, EuroSatValidationSizeTooLarge) {
  write_eurosat(tmp_.path() / "eurosat", {5, 5});
  std::string msg = input_error([&] { load_data("eurosat", data_options(8, 0)); });
  EXPECT_THAT(msg, HasSubstr("validation size (val_size) 8 leaves no training examples"));
  EXPECT_THAT(msg, HasSubstr("(less its held-out test images) holds only 8"));
}

TEST_F(ImageSets, EuroSatNotFound) {
  for (const auto& dir : data_search_dirs())
    if (fs::exists(fs::path(dir) / "eurosat")) GTEST_SKIP() << "eurosat is installed in " << dir;
  fs::create_directories(tmp_.path() / "eurosat");  // there, but without class folders
  std::string msg = input_error([&] { load_data("eurosat", {}); });
  EXPECT_THAT(msg, HasSubstr("data set 'eurosat' not found: looked for one sub-folder of JPEG "
                             "images per class in " +
                             tmp_.file("eurosat/2750") + ", " + tmp_.file("eurosat")));
  EXPECT_THAT(msg, HasSubstr(tmp_.file("eurosat") + " exists but lacks class folders"));
  EXPECT_THAT(msg, HasSubstr("docs/data.md"));
}

TEST_F(ImageSets, Stl10SplitsItsTrainingFiles) {
  write_stl10(tmp_.path() / "stl10_binary", 6, 4);
  EXPECT_EQ(resolve_data_dir("stl10"), (tmp_.path() / "stl10_binary").string());
  DataSplits s = load_data("stl10", data_options(2, 3));
  EXPECT_EQ(s.train.size(), 4);
  EXPECT_EQ(s.val.size(), 2);
  EXPECT_EQ(s.test.size(), 4);
  EXPECT_EQ(s.test.labels, (std::vector<uint8_t>{0, 1, 2, 3}));  // file order, labels - 1
  for (const Dataset* d : {&s.train, &s.val, &s.test}) {
    EXPECT_EQ(d->name, "stl10");
    EXPECT_EQ(d->num_classes, 10);
    EXPECT_EQ(d->item_shape, (Shape{3, 96, 96}));
    // Image i of a file has label i % 10 and first pixel stl10_pixel(i, 0, 0, 0).
    for (int64_t i = 0; i < d->size(); ++i)
      EXPECT_EQ(d->item(i)[0], test::stl10_pixel(d->labels[i], 0, 0, 0));
  }
  EXPECT_EQ(load_data("stl10", data_options(2, 3, 1)).train.size(), 1);
  EXPECT_THAT(input_error([&] { load_data("stl10", data_options(6, 0)); }),
              HasSubstr(tmp_.file("stl10_binary/train_X.bin") + " holds only 6"));
}

TEST_F(ImageSets, Stl10ByPathAndIncomplete) {
  const fs::path dir = tmp_.path() / "stl10";
  write_stl10(dir, 3, 2);
  EXPECT_EQ(resolve_data_dir("stl10"), dir.string());
  EXPECT_EQ(load_data(dir.string(), data_options(1, 0)).test.size(), 2);
  fs::remove(dir / "test_y.bin");
  EXPECT_THAT(input_error([&] { load_data(dir.string(), {}); }),
              HasSubstr(dir.string() + ": data folder lacks test_y.bin; expected a folder holding "
                                       "STL-10's train_X.bin"));
}

TEST_F(ImageSets, NamesAndFormatsInMessages) {
  std::string msg = input_error([&] { load_data("cifar10", {}); });
  EXPECT_THAT(msg, HasSubstr("eurosat, stl10"));
  EXPECT_THAT(msg, HasSubstr("STL-10's train_X.bin"));
  EXPECT_THAT(msg, HasSubstr("one sub-folder of JPEG images per class"));
  fs::create_directories(tmp_.path() / "empty");
  msg = input_error([&] { load_data(tmp_.file("empty"), {}); });
  EXPECT_THAT(msg, HasSubstr(tmp_.file("empty") + ": holds no data-set files; expected a folder "
                                                  "holding train-images-idx3-ubyte"));
  EXPECT_THAT(msg, HasSubstr("; or one sub-folder of JPEG images per class"));
  EXPECT_THAT(msg, Not(HasSubstr("train_files.txt")));
  // HDF5 files without their lists (issue 22, defect 12): the message names the lists.
  test::write_bytes(tmp_.file("empty") + "/ply_data_train0.h5", {1});
  EXPECT_THAT(input_error([&] { load_data(tmp_.file("empty"), {}); }),
              HasSubstr("a point-cloud folder needs train_files.txt and test_files.txt"));
}

}  // namespace
}  // namespace zotrain
