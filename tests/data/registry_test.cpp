#include "zotrain/data/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "data/data_test_util.h"
#include "data/rotate.h"
#include "test_util.h"

namespace zotrain {
namespace {

namespace fs = std::filesystem;
using test::data_options;
using test::example_id;
using test::input_error;
using testing::HasSubstr;

std::vector<int64_t> ids(const Dataset& ds) {
  return test::ids_of(ds.size(), [&](int64_t i) { return example_id(ds.item(i)); });
}

// Runs a scope in another working directory, so that ./data is a folder the test controls.
class CurrentDir {
 public:
  explicit CurrentDir(const fs::path& dir) : old_(fs::current_path()) { fs::current_path(dir); }
  ~CurrentDir() { fs::current_path(old_); }

 private:
  fs::path old_;
};

// Points ZOTRAIN_DATA at a temp folder holding a generated mnist/ (100 train, 30 test examples),
// and puts the variable back afterwards.
class DataRegistry : public testing::Test {
 protected:
  void SetUp() override { test::write_data_folder(tmp_.path() / "mnist", 100, 30); }

  test::TempDir tmp_;
  test::ScopedEnv env_{"ZOTRAIN_DATA", tmp_.path().string()};
};

TEST_F(DataRegistry, SearchDirsStartWithZotrainData) {
  auto dirs = data_search_dirs();
  ASSERT_EQ(dirs.size(), 3u);
  EXPECT_EQ(dirs[0], tmp_.path().string());
  EXPECT_EQ(dirs[1], (fs::current_path() / "data").string());
  EXPECT_EQ(dirs[2], "/usr/share/datasets");
  unsetenv("ZOTRAIN_DATA");
  EXPECT_EQ(data_search_dirs().size(), 2u);
}

TEST_F(DataRegistry, ResolvesNameAndPath) {
  const std::string folder = (tmp_.path() / "mnist").string();
  EXPECT_EQ(resolve_data_dir("mnist"), folder);
  EXPECT_EQ(resolve_data_dir(folder), folder);
  EXPECT_EQ(resolve_data_dir(folder + "/"), folder + "/");
}

TEST_F(DataRegistry, SplitSizesShapesAndClasses) {
  DataSplits s = load_data("mnist", data_options(20, 1));
  EXPECT_EQ(s.train.size(), 80);
  EXPECT_EQ(s.val.size(), 20);
  EXPECT_EQ(s.test.size(), 30);
  for (const Dataset* d : {&s.train, &s.val, &s.test}) {
    EXPECT_EQ(d->name, "mnist");
    EXPECT_EQ(d->item_shape, (Shape{1, 4, 4}));
    EXPECT_EQ(d->num_classes, 10);
    EXPECT_EQ(d->pixels.size(), size_t(d->size() * 16));
    for (int64_t i = 0; i < d->size(); ++i)  // labels travel with their images
      ASSERT_EQ(d->labels[i], example_id(d->item(i)) % 10);
  }
  for (int64_t i = 0; i < 30; ++i) EXPECT_EQ(example_id(s.test.item(i)), i);  // test: file order
}

TEST_F(DataRegistry, SplitsAreDisjointAndCoverTheTrainingFile) {
  DataSplits s = load_data("mnist", data_options(25, 7));
  std::vector<int64_t> all = ids(s.train), val = ids(s.val);
  all.insert(all.end(), val.begin(), val.end());
  std::sort(all.begin(), all.end());
  for (int64_t i = 0; i < 100; ++i) ASSERT_EQ(all[i], i);
  // Permuted, not the file's order.
  std::vector<int64_t> train = ids(s.train);
  EXPECT_FALSE(std::is_sorted(train.begin(), train.end()));
}

TEST_F(DataRegistry, SplitDependsOnlyOnTheSeed) {
  DataSplits a = load_data("mnist", data_options(20, 5));
  DataSplits b = load_data("mnist", data_options(20, 5));
  DataSplits c = load_data("mnist", data_options(20, 6));
  EXPECT_EQ(ids(a.train), ids(b.train));
  EXPECT_EQ(ids(a.val), ids(b.val));
  EXPECT_EQ(a.train.pixels, b.train.pixels);
  EXPECT_NE(ids(a.val), ids(c.val));
}

TEST_F(DataRegistry, TrainLimitKeepsTheFirstTrainingExamples) {
  DataSplits full = load_data("mnist", data_options(20, 3));
  DataSplits limited = load_data("mnist", data_options(20, 3, 10));
  ASSERT_EQ(limited.train.size(), 10);
  std::vector<int64_t> first = ids(full.train);
  first.resize(10);
  EXPECT_EQ(ids(limited.train), first);
  EXPECT_EQ(ids(limited.val), ids(full.val));  // the held-out set does not move
  EXPECT_EQ(limited.test.size(), 30);
  EXPECT_EQ(load_data("mnist", data_options(20, 3, 1000)).train.size(), 80);  // more than there is
}

TEST_F(DataRegistry, TestLimitKeepsTheFirstTestExamples) {
  DataSplits full = load_data("mnist", data_options(20, 3));
  DataOptions o = data_options(20, 3);
  o.test_limit = 7;
  DataSplits limited = load_data("mnist", o);
  std::vector<int64_t> first = ids(full.test);
  first.resize(7);
  EXPECT_EQ(ids(limited.test), first);
  EXPECT_EQ(ids(limited.train), ids(full.train));
  o.test_limit = -1;
  EXPECT_THAT(input_error([&] { load_data("mnist", o); }), HasSubstr("test_limit"));
}

TEST_F(DataRegistry, ZeroValidationSize) {
  DataSplits s = load_data("mnist", data_options(0, 3));
  EXPECT_EQ(s.train.size(), 100);
  EXPECT_EQ(s.val.size(), 0);
}

TEST_F(DataRegistry, BadSizes) {
  std::string msg = input_error([&] { load_data("mnist", data_options(100, 0)); });
  EXPECT_THAT(msg, HasSubstr("val_size"));
  EXPECT_THAT(msg, HasSubstr(tmp_.file("mnist/train-images-idx3-ubyte")));
  EXPECT_THAT(input_error([&] { load_data("mnist", data_options(-1, 0)); }), HasSubstr("val_size"));
  EXPECT_THAT(input_error([&] { load_data("mnist", data_options(10, 0, -5)); }),
              HasSubstr("train_limit"));
  EXPECT_EQ(load_data("mnist", data_options(99, 0)).train.size(), 1);
}

TEST_F(DataRegistry, ReadsGzipFilesByPath) {
  const fs::path folder = tmp_.path() / "gz" / "set";
  test::write_data_folder(folder, 40, 10, true);
  DataSplits s = load_data(folder.string(), data_options(10, 0));
  EXPECT_EQ(s.train.name, folder.string());
  EXPECT_EQ(s.train.size(), 30);
  EXPECT_EQ(s.test.size(), 10);
  EXPECT_EQ(s.train.num_classes, 10);  // max label + 1 for a folder of unknown content
}

TEST_F(DataRegistry, UnknownName) {
  std::string msg = input_error([&] { load_data("cifar10", {}); });
  EXPECT_THAT(msg, HasSubstr("unknown data set 'cifar10'"));
  EXPECT_THAT(msg, HasSubstr("mnist, fashion-mnist, mnist-rotated[:DEG|:LO..HI]"));
  EXPECT_THAT(msg, HasSubstr(tmp_.path().string()));
  EXPECT_THAT(msg, HasSubstr("/usr/share/datasets"));
}

TEST_F(DataRegistry, KnownNameWithoutFiles) {
  fs::remove_all(tmp_.path() / "mnist");
  CurrentDir cwd(tmp_.path());  // no ./data/mnist there
  for (const auto& dir : data_search_dirs())
    if (fs::exists(fs::path(dir) / "mnist")) GTEST_SKIP() << "mnist is installed in " << dir;
  std::string msg = input_error([&] { load_data("mnist", {}); });
  EXPECT_THAT(msg, HasSubstr("data set 'mnist' not found"));
  EXPECT_THAT(msg, HasSubstr(tmp_.file("mnist")));
  EXPECT_THAT(msg, HasSubstr("/usr/share/datasets/mnist"));
  EXPECT_THAT(msg, HasSubstr("scripts/setup.sh"));
}

TEST_F(DataRegistry, IncompleteFolder) {
  fs::remove(tmp_.path() / "mnist" / "t10k-labels-idx1-ubyte");
  std::string msg = input_error([&] { resolve_data_dir((tmp_.path() / "mnist").string()); });
  EXPECT_THAT(msg, HasSubstr(tmp_.file("mnist") + ": data folder lacks t10k-labels-idx1-ubyte"));
  CurrentDir cwd(tmp_.path());  // no ./data/mnist there
  if (fs::exists("/usr/share/datasets/mnist")) return;
  msg = input_error([&] { resolve_data_dir("mnist"); });
  EXPECT_THAT(msg, HasSubstr(tmp_.file("mnist") + " exists but lacks t10k-labels-idx1-ubyte"));
}

TEST_F(DataRegistry, MissingPath) {
  std::string msg = input_error([&] { load_data(tmp_.file("nowhere"), {}); });
  EXPECT_THAT(msg, HasSubstr(tmp_.file("nowhere") + ": no such data folder"));
}

TEST_F(DataRegistry, TestLabelsMustFitTheClasses) {
  // A known name has 10 classes whatever the labels say.
  write_idx(tmp_.file("mnist/t10k-labels-idx1-ubyte"), IdxArray{{30}, std::vector<uint8_t>(30, 10)},
            false);
  std::string msg = input_error([&] { load_data("mnist", data_options(10, 0)); });
  EXPECT_THAT(msg, HasSubstr(tmp_.file("mnist/t10k-labels-idx1-ubyte") + ": label 10"));
}

TEST_F(DataRegistry, TestImagesMustMatchTrainingImages) {
  write_idx(tmp_.file("mnist/t10k-images-idx3-ubyte"), test::make_images(30, 5, 4), false);
  std::string msg = input_error([&] { load_data("mnist", data_options(10, 0)); });
  EXPECT_THAT(msg, HasSubstr(tmp_.file("mnist/t10k-images-idx3-ubyte") + ": image size [1, 5, 4]"));
  EXPECT_THAT(msg, HasSubstr(tmp_.file("mnist/train-images-idx3-ubyte")));
}

TEST_F(DataRegistry, CorruptFileIsNamed) {
  test::write_bytes(tmp_.file("mnist/train-labels-idx1-ubyte"), {0, 0, 8});
  EXPECT_THAT(input_error([&] { load_data("mnist", {}); }),
              HasSubstr(tmp_.file("mnist/train-labels-idx1-ubyte")));
}

// Each example of `rotated` is example i of `upright` turned by `degrees`.
void expect_rotated(const Dataset& rotated, const Dataset& upright, double degrees) {
  ASSERT_EQ(rotated.size(), upright.size());
  ASSERT_EQ(rotated.item_shape, upright.item_shape);
  EXPECT_EQ(rotated.labels, upright.labels);
  const Shape& s = upright.item_shape;
  std::vector<uint8_t> want(static_cast<size_t>(upright.item_numel()));
  for (int64_t i = 0; i < upright.size(); ++i) {
    rotate_image(upright.item(i), want.data(), s[0], s[1], s[2], degrees);
    ASSERT_TRUE(std::equal(want.begin(), want.end(), rotated.item(i))) << "example " << i;
  }
}

TEST_F(DataRegistry, FixedRotationTurnsTheUprightSplits) {
  const std::string folder = (tmp_.path() / "mnist").string();
  EXPECT_EQ(resolve_data_dir("mnist-rotated:90"), folder);
  DataSplits upright = load_data("mnist", data_options(20, 4));
  DataSplits rotated = load_data("mnist-rotated:90", data_options(20, 4));
  EXPECT_EQ(rotated.train.name, "mnist-rotated:90");
  EXPECT_EQ(rotated.train.num_classes, 10);
  expect_rotated(rotated.train, upright.train, 90);
  expect_rotated(rotated.val, upright.val, 90);
  expect_rotated(rotated.test, upright.test, 90);
}

TEST_F(DataRegistry, RandomRotationIsFixedPerExampleWhateverTheSplitSeed) {
  DataSplits a = load_data("mnist-rotated:-30..30", data_options(20, 1));
  DataSplits b = load_data("mnist-rotated:-30..30", data_options(20, 2));
  EXPECT_EQ(a.test.pixels, b.test.pixels);  // the test set is in file order
  // Training examples move with the seed but keep their rotated pixels: compare train + val as
  // multisets of images.
  auto all = [](const DataSplits& s) {
    std::vector<std::string> items;  // the pixels of each item as bytes
    for (const Dataset* d : {&s.train, &s.val})
      for (int64_t i = 0; i < d->size(); ++i)
        items.emplace_back(reinterpret_cast<const char*>(d->item(i)), d->item_numel());
    std::sort(items.begin(), items.end());
    return items;
  };
  EXPECT_EQ(all(a), all(b));
  DataSplits upright = load_data("mnist", data_options(20, 1));
  EXPECT_NE(a.test.pixels, upright.test.pixels);
}

TEST_F(DataRegistry, RotatedNameWithoutAnglesMeansMinus90To90) {
  EXPECT_EQ(load_data("mnist-rotated", data_options(20, 1)).test.pixels,
            load_data("mnist-rotated:-90..90", data_options(20, 1)).test.pixels);
}

TEST_F(DataRegistry, BadRotatedNames) {
  std::string msg = input_error([&] { load_data("mnist-rotated:abc", {}); });
  EXPECT_THAT(msg, HasSubstr("data set 'mnist-rotated:abc': rotation 'abc' is not a number"));
  EXPECT_THAT(input_error([&] { load_data("mnist-rotated:5..1", {}); }), HasSubstr("is empty"));
  EXPECT_THAT(input_error([&] { load_data("mnist:45", {}); }),
              HasSubstr("unknown data set 'mnist:45'"));
  EXPECT_THAT(input_error([&] { load_data("cifar10-rotated:45", {}); }),
              HasSubstr("unknown data set 'cifar10-rotated:45'"));
}

// The real Fashion-MNIST as Debian's dataset-fashion-mnist installs it (CI has it).
TEST(DataRegistryReal, FashionMnist) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!fs::is_directory(dir)) {
    if (std::getenv("ZOTRAIN_REQUIRE_DATA")) FAIL() << dir << " is not installed";
    GTEST_SKIP() << dir << " is not installed";
  }
  DataSplits s = load_data(dir, DataOptions{});
  EXPECT_EQ(s.train.size() + s.val.size(), 60000);
  EXPECT_EQ(s.val.size(), 5000);
  EXPECT_EQ(s.test.size(), 10000);
  EXPECT_EQ(s.train.num_classes, 10);
  EXPECT_EQ(s.train.item_shape, (Shape{1, 28, 28}));
  std::vector<int> per_class(10);
  for (uint8_t l : s.test.labels) ++per_class[l];
  for (int c : per_class) EXPECT_EQ(c, 1000);  // the test set is balanced
  Normalization n = compute_normalization(s.train);
  EXPECT_NEAR(n.mean, 0.286, 0.01);
  EXPECT_NEAR(n.std, 0.353, 0.01);
}

}  // namespace
}  // namespace zotrain
