#include "data/image_folder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "data/image_test_util.h"
#include "test_util.h"

namespace zotrain {
namespace {

namespace fs = std::filesystem;
using test::constant;
using test::input_error;
using test::write_jpeg;
using testing::HasSubstr;

// JPEG at quality 100 without subsampling still rounds through YCbCr and the DCT.
constexpr int kTolerance = 3;

class ImageFolder : public testing::Test {
 protected:
  // Writes <class>/<file> as an RGB image of 4 x 5 in one colour.
  void write(const std::string& cls, const std::string& file, std::vector<uint8_t> colour) {
    fs::create_directories(tmp_.path() / cls);
    write_jpeg(path(cls, file), 3, 4, 5, constant(std::move(colour)));
  }
  std::string path(const std::string& cls, const std::string& file) const {
    return (tmp_.path() / cls / file).string();
  }
  Dataset load() const { return load_image_folder(tmp_.path().string(), "set"); }

  test::TempDir tmp_;
};

// Whether every pixel of each channel of item i is within kTolerance of `colour`.
void expect_colour(const Dataset& ds, int64_t i, const std::vector<uint8_t>& colour) {
  const int64_t plane = ds.item_shape[1] * ds.item_shape[2];
  for (int64_t c = 0; c < ds.item_shape[0]; ++c)
    for (int64_t p = 0; p < plane; ++p)
      ASSERT_NEAR(ds.item(i)[c * plane + p], colour[size_t(c)], kTolerance)
          << "item " << i << " channel " << c << " pixel " << p;
}

TEST_F(ImageFolder, ClassesAndFilesInSortedOrder) {
  // Written out of order; "b_10" sorts before "b_2" (names, not numbers).
  write("Forest", "b_2.jpg", {0, 200, 0});
  write("Forest", "b_10.jpg", {10, 120, 30});
  write("AnnualCrop", "a_1.jpg", {200, 100, 50});
  write("River", "c_1.jpg", {0, 0, 250});
  Dataset ds = load();
  EXPECT_EQ(ds.name, "set");
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_EQ(ds.item_shape, (Shape{3, 4, 5}));
  EXPECT_EQ(ds.labels, (std::vector<uint8_t>{0, 1, 1, 2}));
  expect_colour(ds, 0, {200, 100, 50});
  expect_colour(ds, 1, {10, 120, 30});
  expect_colour(ds, 2, {0, 200, 0});
  expect_colour(ds, 3, {0, 0, 250});
}

TEST_F(ImageFolder, PixelsArePlanesOfRows) {
  // A smooth pattern that tells channels, rows and columns apart.
  auto pattern = [](int64_t c, int64_t y, int64_t x) {
    return uint8_t(40 + 60 * c + 9 * y + 3 * x);
  };
  for (const char* cls : {"a", "b"}) fs::create_directories(tmp_.path() / cls);
  write_jpeg(path("a", "1.jpg"), 3, 8, 16, pattern);
  write_jpeg(path("b", "1.jpg"), 3, 8, 16, constant({1, 2, 3}));
  Dataset ds = load();
  ASSERT_EQ(ds.item_shape, (Shape{3, 8, 16}));
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t y = 0; y < 8; ++y)
      for (int64_t x = 0; x < 16; ++x)
        ASSERT_NEAR(ds.item(0)[(c * 8 + y) * 16 + x], pattern(c, y, x), kTolerance)
            << c << " " << y << " " << x;
}

TEST_F(ImageFolder, GrayscaleImagesHaveOneChannel) {
  for (const char* cls : {"a", "b"}) {
    fs::create_directories(tmp_.path() / cls);
    write_jpeg(path(cls, "1.jpg"), 1, 6, 6, constant({cls[0] == 'a' ? uint8_t(30) : uint8_t(220)}));
  }
  Dataset ds = load();
  EXPECT_EQ(ds.item_shape, (Shape{1, 6, 6}));
  expect_colour(ds, 0, {30});
  expect_colour(ds, 1, {220});
}

TEST_F(ImageFolder, SkipsHiddenFiles) {
  write("a", "1.jpg", {1, 2, 3});
  write("b", "1.jpg", {1, 2, 3});
  test::write_bytes(tmp_.file(".DS_Store"), {1, 2, 3});
  test::write_bytes(path("a", "._1.jpg"), {1, 2, 3});
  EXPECT_EQ(load().size(), 2);
}

TEST_F(ImageFolder, FileBesideTheClassFolders) {
  write("a", "1.jpg", {1, 2, 3});
  write("b", "1.jpg", {1, 2, 3});
  test::write_bytes(tmp_.file("README.txt"), {'h', 'i'});
  EXPECT_THAT(input_error([&] { load(); }),
              HasSubstr(tmp_.file("README.txt") + ": is a file beside the class folders"));
}

TEST_F(ImageFolder, TooFewClasses) {
  EXPECT_THAT(input_error([&] { load(); }), HasSubstr("holds 0 class folders; expected 2 to 256"));
  write("a", "1.jpg", {1, 2, 3});
  EXPECT_THAT(input_error([&] { load(); }),
              HasSubstr(tmp_.path().string() + ": holds 1 class folders"));
}

TEST_F(ImageFolder, EmptyClassFolder) {
  write("a", "1.jpg", {1, 2, 3});
  fs::create_directories(tmp_.path() / "b");
  EXPECT_THAT(input_error([&] { load(); }),
              HasSubstr(tmp_.file("b") + ": class folder holds no images"));
}

TEST_F(ImageFolder, FolderInsideAClassFolder) {
  write("a", "1.jpg", {1, 2, 3});
  write("b", "1.jpg", {1, 2, 3});
  fs::create_directories(tmp_.path() / "b" / "more");
  EXPECT_THAT(input_error([&] { load(); }),
              HasSubstr(path("b", "more") + ": is a folder inside a class folder"));
}

TEST_F(ImageFolder, NonImageFile) {
  write("a", "1.jpg", {1, 2, 3});
  write("b", "1.jpg", {1, 2, 3});
  test::write_bytes(path("b", "notes.txt"), {'n', 'o', 't', 'e'});
  EXPECT_THAT(input_error([&] { load(); }),
              HasSubstr(path("b", "notes.txt") + ": is not a JPEG image"));
  test::write_bytes(path("b", "notes.txt"), {});
  EXPECT_THAT(input_error([&] { load(); }),
              HasSubstr(path("b", "notes.txt") + ": is not a JPEG image"));
}

TEST_F(ImageFolder, CorruptImage) {
  write("a", "1.jpg", {1, 2, 3});
  write("b", "1.jpg", {1, 2, 3});
  std::vector<uint8_t> bytes = test::read_bytes(path("b", "1.jpg"));
  // Cut short: libjpeg only warns and pads the image with gray.
  bytes.resize(bytes.size() / 2);
  test::write_bytes(path("b", "1.jpg"), bytes);
  std::string msg = input_error([&] { load(); });
  EXPECT_THAT(msg, HasSubstr(path("b", "1.jpg") + ": corrupt JPEG image (libjpeg: "));
  // A broken header: an error.
  test::write_bytes(path("b", "1.jpg"), {0xFF, 0xD8, 0xFF, 0xE0, 0, 2, 0xFF, 0xC0});
  EXPECT_THAT(input_error([&] { load(); }), HasSubstr(path("b", "1.jpg") + ": corrupt JPEG image"));
}

// A header may claim 65500 x 65500 pixels in a few bytes (issue 22, defect 7): refused by its
// size before anything is allocated for it.
TEST_F(ImageFolder, ImageThatClaimsAHugeSize) {
  write("a", "1.jpg", {1, 2, 3});
  write("b", "1.jpg", {1, 2, 3});
  std::vector<uint8_t> bytes = test::read_bytes(path("b", "1.jpg"));
  size_t sof = 0;  // the baseline start-of-frame marker: FF C0, length, precision, H, W
  while (sof + 9 < bytes.size() && !(bytes[sof] == 0xFF && bytes[sof + 1] == 0xC0)) ++sof;
  ASSERT_LT(sof + 9, bytes.size());
  for (size_t k : {sof + 5, sof + 7}) bytes[k] = 0xFF, bytes[k + 1] = 0xDC;  // 65500
  test::write_bytes(path("b", "1.jpg"), bytes);
  EXPECT_THAT(input_error([&] { load(); }),
              HasSubstr(path("b", "1.jpg") +
                        ": JPEG image declares 65500 x 65500 pixels; expected at most"));
}

TEST_F(ImageFolder, ImagesOfAnotherSize) {
  write("a", "1.jpg", {1, 2, 3});
  fs::create_directories(tmp_.path() / "b");
  write_jpeg(path("b", "1.jpg"), 3, 5, 4, constant({1, 2, 3}));
  std::string msg = input_error([&] { load(); });
  EXPECT_THAT(msg, HasSubstr(path("b", "1.jpg") +
                             ": image is [3, 5, 4] ([C, H, W]); expected "
                             "[3, 4, 5] like " +
                             path("a", "1.jpg")));
  write_jpeg(path("b", "1.jpg"), 1, 4, 5, constant({1}));  // grayscale among colour images
  EXPECT_THAT(input_error([&] { load(); }), HasSubstr(": image is [1, 4, 5] ([C, H, W])"));
}

TEST_F(ImageFolder, MissingFolder) {
  EXPECT_THAT(input_error([&] { load_image_folder(tmp_.file("nowhere"), "x"); }),
              HasSubstr(tmp_.file("nowhere") + ": cannot be listed"));
}

}  // namespace
}  // namespace zotrain
