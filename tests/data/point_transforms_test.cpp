#include "data/point_transforms.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <set>
#include <vector>

#include "data/data_test_util.h"

namespace zotrain {
namespace {

using testing::HasSubstr;

// n points, point i = (i, 2i + 1, -i) shifted by `offset` in x.
std::vector<float> line_cloud(int64_t n, float offset = 0) {
  std::vector<float> c;
  for (int64_t i = 0; i < n; ++i) c.insert(c.end(), {float(i) + offset, 2.0f * i + 1, -float(i)});
  return c;
}

std::vector<float> random_cloud(int64_t n, uint64_t seed) {
  Rng rng(seed, 1);
  std::vector<float> c(size_t(n * 3));
  for (auto& v : c) v = rng.uniform(-3, 5);
  return c;
}

TEST(SamplePoints, FirstKWithoutRng) {
  auto c = line_cloud(10);
  std::vector<float> out(12);
  sample_points(c.data(), 10, out.data(), 4, nullptr);
  EXPECT_EQ(out, std::vector<float>(c.begin(), c.begin() + 12));
}

TEST(SamplePoints, RandomSubsetOfDistinctPointsSeeded) {
  auto c = line_cloud(50);
  std::vector<float> a(60), b(60);
  Rng r1(3, 0), r2(3, 0);
  sample_points(c.data(), 50, a.data(), 20, &r1);
  sample_points(c.data(), 50, b.data(), 20, &r2);
  EXPECT_EQ(a, b);
  std::set<int> seen;
  for (int i = 0; i < 20; ++i) {
    const int id = int(a[i * 3]);
    ASSERT_EQ(a[i * 3 + 1], 2.0f * id + 1);  // whole points, not mixed coordinates
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 20u);
  EXPECT_FALSE(std::is_sorted(a.begin(), a.end()));
  // Every point is equally likely: over many draws each index turns up about k/p of the time.
  std::vector<int> count(50);
  Rng r(4, 0);
  for (int t = 0; t < 500; ++t) {
    sample_points(c.data(), 50, a.data(), 20, &r);
    for (int i = 0; i < 20; ++i) ++count[int(a[i * 3])];
  }
  for (int n : count) EXPECT_NEAR(n, 200, 60);
}

TEST(SamplePoints, CountOutOfRange) {
  auto c = line_cloud(5);
  std::vector<float> out(18);
  for (int64_t k : {0, 6})
    EXPECT_THAT(test::input_error([&] { sample_points(c.data(), 5, out.data(), k, nullptr); }),
                HasSubstr("cannot sample " + std::to_string(k) + " points of a cloud of 5"));
}

TEST(NormalizeUnitSphere, CentredWithFarthestPointAtOne) {
  auto c = random_cloud(64, 5);
  normalize_unit_sphere(c.data(), 64);
  double mean[3] = {0, 0, 0}, r_max = 0;
  for (int i = 0; i < 64; ++i) {
    double r2 = 0;
    for (int d = 0; d < 3; ++d) mean[d] += c[i * 3 + d] / 64.0, r2 += c[i * 3 + d] * c[i * 3 + d];
    r_max = std::max(r_max, std::sqrt(r2));
  }
  for (double m : mean) EXPECT_NEAR(m, 0, 1e-6);
  EXPECT_NEAR(r_max, 1, 1e-6);
  std::vector<float> same = {2, 2, 2, 2, 2, 2};
  normalize_unit_sphere(same.data(), 2);
  EXPECT_EQ(same, std::vector<float>(6, 0));
}

TEST(RotateAboutUp, KeepsHeightsAndDistances) {
  std::vector<float> p = {1, 5, 0, 0, -2, 1};
  rotate_about_up(p.data(), 2, std::numbers::pi_v<float> / 2);
  const std::vector<float> want = {0, 5, -1, 1, -2, 0};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(p[i], want[i], 1e-6) << i;
  auto c = random_cloud(20, 6), r = c;
  rotate_about_up(r.data(), 20, 0.7f);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(r[i * 3 + 1], c[i * 3 + 1]);
    EXPECT_NEAR(std::hypot(r[i * 3], r[i * 3 + 2]), std::hypot(c[i * 3], c[i * 3 + 2]), 1e-5);
  }
}

TEST(JitterPoints, ClippedGaussianNoise) {
  const int64_t n = 4000;
  std::vector<float> c(size_t(n * 3), 1.0f);
  Rng rng(7, 0);
  jitter_points(c.data(), n, 0.01f, 0.02f, rng);
  double sum = 0, sum_sq = 0;
  int clipped = 0;
  for (float v : c) {
    const double d = v - 1.0;
    ASSERT_LE(std::abs(d), 0.02 + 1e-6);
    clipped += std::abs(d) > 0.02 - 1e-6;
    sum += d, sum_sq += d * d;
  }
  EXPECT_NEAR(sum / c.size(), 0, 5e-4);
  EXPECT_NEAR(std::sqrt(sum_sq / c.size()), 0.0096, 0.0006);  // N(0, 0.01) clipped at 2 sigma
  EXPECT_NEAR(clipped / double(c.size()), 0.0455, 0.01);      // P(|z| > 2)
}

TEST(AugmentPoints, KeyedToSeedEpochAndExample) {
  const auto c = random_cloud(32, 8);
  auto augmented = [&](uint64_t seed, int64_t epoch, int64_t index) {
    auto out = c;
    Rng rng = augmentation_rng(seed, epoch, index);
    augment_points(out.data(), 32, PointAugmentation{}, rng);
    return out;
  };
  EXPECT_EQ(augmented(1, 2, 3), augmented(1, 2, 3));
  EXPECT_NE(augmented(1, 2, 3), augmented(1, 2, 4));
  EXPECT_NE(augmented(1, 2, 3), augmented(1, 3, 3));
  EXPECT_NE(augmented(1, 2, 3), augmented(2, 2, 3));
  // Without jitter only the rotation acts: heights stay; with neither, nothing changes.
  auto rotated = c;
  Rng rng = augmentation_rng(1, 0, 0);
  augment_points(rotated.data(), 32, PointAugmentation{true, 0, 0}, rng);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(rotated[i * 3 + 1], c[i * 3 + 1]);
  EXPECT_NE(rotated, c);
  auto same = c;
  augment_points(same.data(), 32, PointAugmentation{false, 0, 0}, rng);
  EXPECT_EQ(same, c);
}

}  // namespace
}  // namespace zotrain
