#include "data/point_batcher.h"

#include <vector>

namespace zotrain {

PointBatcher::PointBatcher(const PointCloudSet& data, int64_t batch_size, int64_t points,
                           bool train, uint64_t seed, const PointAugmentation& augmentation)
    : data_(data),
      order_(data.size(), batch_size, train, seed),
      points_(points),
      train_(train),
      seed_(seed),
      augmentation_(augmentation) {
  check_sample_count(points, data.points_per_cloud);  // now rather than at the first batch
}

int64_t PointBatcher::fill(int64_t index, float* x, uint8_t* labels, RowShare share) const {
  const int64_t n = rows(index), k = points_;
  const int64_t begin = share.begin(n), end = share.end(n);
  std::vector<float> cloud(static_cast<size_t>(k * 3));
  for (int64_t r = 0; r < n; ++r) {
    const int64_t i = order_.example(index, r);
    if (labels) labels[r] = data_.labels[i];
    if (r < begin || r >= end) continue;
    Rng rng = augmentation_rng(seed_, order_.epoch(), i);
    sample_points(data_.cloud(i), data_.points_per_cloud, cloud.data(), k, train_ ? &rng : nullptr);
    normalize_unit_sphere(cloud.data(), k);
    if (train_) augment_points(cloud.data(), k, augmentation_, rng);
    float* dst = x + (r - begin) * 3 * k;
    for (int64_t p = 0; p < k; ++p)
      for (int d = 0; d < 3; ++d) dst[d * k + p] = cloud[p * 3 + d];
  }
  return n;
}

}  // namespace zotrain
