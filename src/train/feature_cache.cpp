#include "zotrain/train/feature_cache.h"

#include <algorithm>

#include "zotrain/core/error.h"

namespace zotrain {

namespace {

template <typename T>
FeatureSet extract(BatchSource& images, int64_t examples, int64_t numel, const FrozenRun<T>& run,
                   std::vector<T> FeatureSet::*out) {
  FeatureSet set;
  set.numel = numel;
  (set.*out).resize(static_cast<size_t>(examples * numel));
  set.labels.resize(static_cast<size_t>(examples));
  images.start_epoch(0);
  int64_t done = 0;
  for (int64_t b = 0; b < images.batches_per_epoch(); ++b) {
    const auto [rows, features] = run(b, set.labels.data() + done);
    ZT_ASSERT(done + rows <= examples);
    std::copy(features, features + rows * numel, (set.*out).data() + done * numel);
    done += rows;
  }
  ZT_ASSERT(done == examples);
  return set;
}

}  // namespace

FeatureSet extract_features(BatchSource& images, int64_t examples, int64_t numel,
                            const FrozenRun<float>& run) {
  return extract(images, examples, numel, run, &FeatureSet::f32);
}

FeatureSet extract_features(BatchSource& images, int64_t examples, int64_t numel,
                            const FrozenRun<int8_t>& run) {
  return extract(images, examples, numel, run, &FeatureSet::int8);
}

FeatureSource::FeatureSource(std::shared_ptr<const FeatureSet> set, int64_t batch, bool train,
                             uint64_t seed)
    : set_(std::move(set)), order_(static_cast<int64_t>(set_->labels.size()), batch, train, seed) {}

template <typename T>
int64_t FeatureSource::copy(const std::vector<T>& from, int64_t index, T* x, uint8_t* labels,
                            RowShare share) const {
  ZT_ASSERT(!from.empty());
  const int64_t rows = order_.rows(index), n = set_->numel;
  const int64_t begin = share.begin(rows), end = share.end(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t e = order_.example(index, r);
    if (labels) labels[r] = set_->labels[static_cast<size_t>(e)];
    if (r >= begin && r < end)
      std::copy(from.data() + e * n, from.data() + (e + 1) * n, x + (r - begin) * n);
  }
  return rows;
}

int64_t FeatureSource::fill(int64_t index, float* x, uint8_t* labels, RowShare share) const {
  return copy(set_->f32, index, x, labels, share);
}

int64_t FeatureSource::fill(int64_t index, int8_t* x, uint8_t* labels, RowShare share) const {
  return copy(set_->int8, index, x, labels, share);
}

}  // namespace zotrain
