#include "data/stl10.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "data/image_test_util.h"
#include "test_util.h"

namespace zotrain {
namespace {

using test::input_error;
using testing::HasSubstr;

class Stl10 : public testing::Test {
 protected:
  Dataset load() const { return load_stl10_pair(x_, y_, "stl"); }

  test::TempDir tmp_;
  std::string x_ = tmp_.file("train_X.bin"), y_ = tmp_.file("train_y.bin");
};

TEST_F(Stl10, TransposesColumnMajorPlanesAndShiftsLabels) {
  test::write_stl10(x_, y_, {1, 10, 4});
  Dataset ds = load();
  EXPECT_EQ(ds.name, "stl");
  EXPECT_EQ(ds.num_classes, 10);
  EXPECT_EQ(ds.item_shape, (Shape{3, 96, 96}));
  EXPECT_EQ(ds.labels, (std::vector<uint8_t>{0, 9, 3}));
  ASSERT_EQ(ds.size(), 3);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t y = 0; y < 96; ++y)
        for (int64_t x = 0; x < 96; ++x)
          ASSERT_EQ(ds.item(i)[(c * 96 + y) * 96 + x], test::stl10_pixel(i, c, y, x))
              << i << " " << c << " " << y << " " << x;
}

TEST_F(Stl10, SizeNotAWholeNumberOfImages) {
  test::write_stl10(x_, y_, {1, 2});
  std::vector<uint8_t> x = test::read_bytes(x_);
  x.pop_back();
  test::write_bytes(x_, x);
  EXPECT_THAT(input_error([&] { load(); }),
              HasSubstr(x_ + ": 55295 bytes is not a whole, nonzero number of STL-10 images of "
                             "27648 bytes"));
  test::write_bytes(x_, {});
  EXPECT_THAT(input_error([&] { load(); }), HasSubstr(x_ + ": 0 bytes is not a whole"));
}

TEST_F(Stl10, LabelOutOfRange) {
  for (uint8_t bad : {0, 11}) {
    test::write_stl10(x_, y_, {3, bad});
    EXPECT_THAT(input_error([&] { load(); }),
                HasSubstr(y_ + ": label " + std::to_string(bad) +
                          " at index 1 is out of range; STL-10 labels are 1 to 10"));
  }
}

TEST_F(Stl10, CountMismatch) {
  test::write_stl10(x_, y_, {1, 2});
  test::write_bytes(y_, {1, 2, 3});
  EXPECT_THAT(input_error([&] { load(); }),
              HasSubstr(y_ + ": holds 3 labels; expected one byte per image, 2 as in " + x_));
}

TEST_F(Stl10, MissingFile) {
  test::write_stl10(x_, y_, {1});
  std::filesystem::remove(y_);
  EXPECT_THAT(input_error([&] { load(); }),
              HasSubstr(y_ + ": no such file (expected STL-10 labels)"));
}

}  // namespace
}  // namespace zotrain
