// Point-cloud preprocessing and train-time augmentation, as PointNet trains on ModelNet40. A cloud
// is n points [n, 3] (x, y, z) with y up, ModelNet40's convention. Random transforms draw from the
// Rng they are given; augmentation_rng keys it to (seed, epoch, example), so an epoch's
// augmentation is the same in any run, thread count or resumed run.
#pragma once

#include <cstdint>

#include "zotrain/core/rng.h"

namespace zotrain {

// Copies k of the p points of `in` into `out` ([k, 3], not overlapping `in`): a uniformly random
// k-subset in random order when `rng` is given, else the first k (evaluation needs no chance).
// Throws InputError unless 1 <= k <= p (check_sample_count).
void sample_points(const float* in, int64_t p, float* out, int64_t k, Rng* rng);
void check_sample_count(int64_t k, int64_t p);

// Moves the centroid to the origin and scales so that the farthest point is at distance 1 (a
// cloud of coincident points becomes all zeros).
void normalize_unit_sphere(float* cloud, int64_t n);

// Rotates about the y axis by `radians`: x' = x cos + z sin, z' = -x sin + z cos.
void rotate_about_up(float* cloud, int64_t n, float radians);

// Adds to every coordinate sigma * N(0, 1), clipped to [-clip, clip] (PointNet: 0.01, 0.05).
void jitter_points(float* cloud, int64_t n, float sigma, float clip, Rng& rng);

// PointNet's training augmentation: a rotation about the up axis by a uniform angle in [0, 2 pi)
// (if `rotate`), then jitter (if sigma > 0).
struct PointAugmentation {
  bool rotate = true;
  float jitter_sigma = 0.01f, jitter_clip = 0.05f;
};
void augment_points(float* cloud, int64_t n, const PointAugmentation& a, Rng& rng);

// The generator for example `index` (its index in the data set) in `epoch`.
Rng augmentation_rng(uint64_t seed, int64_t epoch, int64_t index);

}  // namespace zotrain
