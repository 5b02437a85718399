#include "data/rotate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "data/data_test_util.h"
#include "zotrain/core/rng.h"

namespace zotrain {
namespace {

using test::input_error;
using testing::HasSubstr;

std::vector<uint8_t> random_image(int64_t n, uint64_t seed) {
  Rng rng(seed, 0);
  std::vector<uint8_t> img(static_cast<size_t>(n));
  for (auto& p : img) p = static_cast<uint8_t>(rng.below(256));
  return img;
}

std::vector<uint8_t> rotated(const std::vector<uint8_t>& in, int64_t c, int64_t h, int64_t w,
                             double degrees) {
  std::vector<uint8_t> out(in.size(), 7);  // 7: any pixel left unwritten shows
  rotate_image(in.data(), out.data(), c, h, w, degrees);
  return out;
}

TEST(RotateImage, ZeroDegreesIsTheIdentity) {
  auto img = random_image(2 * 5 * 7, 1);
  EXPECT_EQ(rotated(img, 2, 5, 7, 0), img);
  EXPECT_EQ(rotated(img, 2, 5, 7, 360), img);
}

TEST(RotateImage, QuarterTurnsAreExactTranspositionsAndFlips) {
  const int64_t n = 6;
  auto img = random_image(n * n, 2);
  auto at = [&](const std::vector<uint8_t>& a, int64_t y, int64_t x) { return a[y * n + x]; };
  auto ccw = rotated(img, 1, n, n, 90), cw = rotated(img, 1, n, n, -90);
  auto half = rotated(img, 1, n, n, 180);
  for (int64_t y = 0; y < n; ++y) {
    for (int64_t x = 0; x < n; ++x) {
      // Counter-clockwise on screen: the top row comes from the right column.
      ASSERT_EQ(at(ccw, y, x), at(img, x, n - 1 - y)) << y << "," << x;
      ASSERT_EQ(at(cw, y, x), at(img, n - 1 - x, y)) << y << "," << x;
      ASSERT_EQ(at(half, y, x), at(img, n - 1 - y, n - 1 - x)) << y << "," << x;
    }
  }
}

TEST(RotateImage, HalfTurnOfANonSquareImage) {
  const int64_t h = 3, w = 5;
  auto img = random_image(h * w, 3);
  auto half = rotated(img, 1, h, w, 180);
  for (int64_t i = 0; i < h * w; ++i) ASSERT_EQ(half[i], img[h * w - 1 - i]) << i;
}

TEST(RotateImage, ZeroFillOutsideAndInterpolationInside) {
  const int64_t n = 9;
  std::vector<uint8_t> flat(n * n, 200);
  auto out = rotated(flat, 1, n, n, 45);
  EXPECT_EQ(out[0], 0);            // a corner's source lies outside the image
  EXPECT_EQ(out[4 * n + 4], 200);  // the centre stays
  EXPECT_EQ(out[3 * n + 4], 200);  // all four neighbours inside: a constant stays constant
  std::vector<uint8_t> dot(n * n, 0);
  dot[4 * n + 5] = 200;  // one pixel right of the centre
  auto turned = rotated(dot, 1, n, n, 45);
  // It lands a distance 1 up-right of the centre, between four pixels; the pixel above-right of
  // the centre samples the source at (row 4, col 5.414): 200 * (1 - 0.414).
  EXPECT_NEAR(turned[3 * n + 5], 200 * (2 - 1.41421356), 1);
  EXPECT_EQ(turned[5 * n + 3], 0);  // nothing on the opposite side
}

TEST(RotateImage, RotatesEveryChannelAlike) {
  const int64_t n = 4;
  auto one = random_image(n * n, 4);
  std::vector<uint8_t> two = one;
  two.insert(two.end(), one.begin(), one.end());
  auto out = rotated(two, 2, n, n, 30);
  std::vector<uint8_t> first(out.begin(), out.begin() + n * n),
      second(out.begin() + n * n, out.end());
  EXPECT_EQ(first, rotated(one, 1, n, n, 30));
  EXPECT_EQ(second, first);
}

TEST(ParseRotation, FixedAngleAndRange) {
  EXPECT_EQ(parse_rotation("45", "x"), (Rotation{45, 45}));
  EXPECT_EQ(parse_rotation("-12.5", "x"), (Rotation{-12.5, -12.5}));
  EXPECT_EQ(parse_rotation("-45..45", "x"), (Rotation{-45, 45}));
  EXPECT_EQ(parse_rotation("0.5..2.25", "x"), (Rotation{0.5, 2.25}));
}

TEST(ParseRotation, BadTextNamesTheSettingAndTheText) {
  for (const char* bad : {"", "abc", "45deg", "nan", "inf", "1e999"}) {
    std::string msg = input_error([&] { parse_rotation(bad, "data set 'mnist-rotated:x'"); });
    EXPECT_THAT(msg, HasSubstr("data set 'mnist-rotated:x': rotation '" + std::string(bad) + "'"));
    EXPECT_THAT(msg, HasSubstr("expected an angle in degrees"));
  }
  for (const char* bad : {"45..", "..45", "a..b", "1..2..3"})
    EXPECT_THAT(input_error([&] { parse_rotation(bad, "w"); }),
                HasSubstr("w: rotation range '" + std::string(bad) + "' is not two numbers"));
  for (const char* bad : {"45..-45", "10..10"})
    EXPECT_THAT(input_error([&] { parse_rotation(bad, "w"); }), HasSubstr("is empty"));
}

TEST(RotationAngle, FixedOrSeededUniformPerExample) {
  EXPECT_EQ(rotation_angle({30, 30}, 1, 5), 30);
  const Rotation r{-45, 45};
  double sum = 0;
  for (int64_t i = 0; i < 2000; ++i) {
    const double a = rotation_angle(r, 9, i);
    ASSERT_GE(a, -45);
    ASSERT_LT(a, 45);
    ASSERT_EQ(a, rotation_angle(r, 9, i));  // a function of (stream, index) alone
    sum += a;
  }
  EXPECT_NEAR(sum / 2000, 0, 3);  // uniform: mean 0, standard error about 0.6
  EXPECT_NE(rotation_angle(r, 9, 0), rotation_angle(r, 9, 1));
  EXPECT_NE(rotation_angle(r, 9, 0), rotation_angle(r, 10, 0));
}

TEST(RotateDataset, EachExampleByItsOwnAngle) {
  Dataset ds;
  ds.item_shape = Shape{1, 5, 5};
  ds.pixels = random_image(3 * 25, 5);
  ds.labels = {0, 1, 2};
  const Dataset upright = ds;
  const Rotation r{-90, 90};
  rotate_dataset(ds, r, 11);
  for (int64_t i = 0; i < 3; ++i) {
    std::vector<uint8_t> item(upright.item(i), upright.item(i) + 25);
    std::vector<uint8_t> got(ds.item(i), ds.item(i) + 25);
    EXPECT_EQ(got, rotated(item, 1, 5, 5, rotation_angle(r, 11, i))) << i;
  }
  EXPECT_EQ(ds.labels, upright.labels);
}

}  // namespace
}  // namespace zotrain
