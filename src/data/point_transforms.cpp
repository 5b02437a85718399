#include "data/point_transforms.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <string>
#include <vector>

#include "zotrain/core/error.h"

namespace zotrain {

void check_sample_count(int64_t k, int64_t p) {
  if (k < 1 || k > p)
    throw InputError("cannot sample " + std::to_string(k) + " points of a cloud of " +
                     std::to_string(p) + "; expected 1 to " + std::to_string(p) +
                     " points per cloud");
}

void sample_points(const float* in, int64_t p, float* out, int64_t k, Rng* rng) {
  check_sample_count(k, p);
  std::vector<int64_t> idx(static_cast<size_t>(p));
  std::iota(idx.begin(), idx.end(), int64_t{0});
  // A partial Fisher-Yates shuffle: its first k entries are a uniform random k-subset.
  if (rng)
    for (int64_t i = 0; i < k; ++i)
      std::swap(idx[i], idx[i + rng->below(static_cast<uint32_t>(p - i))]);
  for (int64_t i = 0; i < k; ++i) std::copy_n(in + idx[i] * 3, 3, out + i * 3);
}

void normalize_unit_sphere(float* cloud, int64_t n) {
  double c[3] = {0, 0, 0};
  for (int64_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) c[d] += cloud[i * 3 + d];
  double r2 = 0;
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int d = 0; d < 3; ++d) {
      cloud[i * 3 + d] = static_cast<float>(cloud[i * 3 + d] - c[d] / n);
      s += double(cloud[i * 3 + d]) * cloud[i * 3 + d];
    }
    r2 = std::max(r2, s);
  }
  if (r2 == 0) return;
  const auto scale = static_cast<float>(1 / std::sqrt(r2));
  for (int64_t i = 0; i < n * 3; ++i) cloud[i] *= scale;
}

void rotate_about_up(float* cloud, int64_t n, float radians) {
  const float c = std::cos(radians), s = std::sin(radians);
  for (int64_t i = 0; i < n; ++i) {
    float* p = cloud + i * 3;
    const float x = p[0], z = p[2];
    p[0] = c * x + s * z;
    p[2] = -s * x + c * z;
  }
}

void jitter_points(float* cloud, int64_t n, float sigma, float clip, Rng& rng) {
  for (int64_t i = 0; i < n * 3; ++i) cloud[i] += std::clamp(sigma * rng.normal(), -clip, clip);
}

void augment_points(float* cloud, int64_t n, const PointAugmentation& a, Rng& rng) {
  if (a.rotate) rotate_about_up(cloud, n, rng.uniform(0, 2 * std::numbers::pi_v<float>));
  if (a.jitter_sigma > 0) jitter_points(cloud, n, a.jitter_sigma, a.jitter_clip, rng);
}

Rng augmentation_rng(uint64_t seed, int64_t epoch, int64_t index) {
  // Tagged so augmentation never shares numbers with the split or shuffling of the same seed;
  // 24 bits of epoch and 32 of index keep every (epoch, index) its own stream.
  constexpr uint64_t kAugmentTag = 0xA6ull << 56;
  return Rng(seed, kAugmentTag | (static_cast<uint64_t>(epoch) & 0xFFFFFF) << 32 |
                       static_cast<uint64_t>(index & 0xFFFFFFFF));
}

}  // namespace zotrain
