// Cuts a point-cloud set into batches and copies each into a network's f32 input as PointNet
// reads it: every cloud sampled down to K points, scaled into the unit sphere, augmented when
// training, and laid out channels first, [rows, 3, 1, K], so that the shared per-point MLP is a
// 1x1 convolution.
#pragma once

#include <cstdint>

#include "data/point_transforms.h"
#include "zotrain/core/shape.h"
#include "zotrain/data/epoch_order.h"
#include "zotrain/data/point_cloud.h"

namespace zotrain {

class PointBatcher {
 public:
  // `data` must outlive the PointBatcher. For training (`train`): a shuffled order per epoch, a
  // random K-subset of each cloud's points and `augmentation`, all drawn from
  // augmentation_rng(seed, epoch, example), so any batch can be refilled exactly. Otherwise the
  // file order, the first K points and no augmentation. Throws InputError unless
  // 1 <= points <= data.points_per_cloud and batch_size >= 1.
  PointBatcher(const PointCloudSet& data, int64_t batch_size, int64_t points, bool train,
               uint64_t seed, const PointAugmentation& augmentation = {});

  void start_epoch(int64_t epoch) { order_.start_epoch(epoch); }
  int64_t batches_per_epoch() const { return order_.batches_per_epoch(); }
  int64_t rows(int64_t index) const { return order_.rows(index); }
  // The input shape of one example: {3, 1, K}.
  Shape item_shape() const { return Shape{3, 1, points_}; }

  // Copies batch `index` of the current epoch into x (rows * 3 * K floats) and its labels into
  // `labels` (may be null). Returns the number of rows. Const and free of shared state, so
  // threads may fill different batches at once.
  // With a `share`, x gets only the share's rows (from its first row), labels every row's.
  int64_t fill(int64_t index, float* x, uint8_t* labels, RowShare share = {}) const;

  const EpochOrder& order() const { return order_; }

 private:
  const PointCloudSet& data_;
  EpochOrder order_;
  int64_t points_;
  bool train_;
  uint64_t seed_;
  PointAugmentation augmentation_;
};

}  // namespace zotrain
