#include "zotrain/train/run_data.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include "data/point_batcher.h"
#include "zotrain/core/error.h"
#include "zotrain/data/batcher.h"

namespace zotrain {

namespace {

// Point clouds lie in the unit sphere (jitter may push a coordinate slightly past 1, which
// saturates): mantissas of 2^-7.
constexpr int kPointExp = -7;

class ImageSource : public BatchSource {
 public:
  ImageSource(const Dataset& data, int64_t batch, const Normalization& norm, bool train,
              uint64_t seed, InputQuantizer quantizer)
      : batcher_(data, batch, norm, train, seed), quantizer_(quantizer) {}
  void start_epoch(int64_t epoch) override { batcher_.start_epoch(epoch); }
  int64_t batches_per_epoch() const override { return batcher_.batches_per_epoch(); }
  int64_t fill(int64_t index, float* x, uint8_t* labels, RowShare share = {}) const override {
    return batcher_.fill(index, x, labels, share);
  }
  int64_t fill(int64_t index, int8_t* x, uint8_t* labels, RowShare share = {}) const override {
    return batcher_.fill(index, quantizer_.lut, x, labels, share);
  }

 private:
  Batcher batcher_;
  InputQuantizer quantizer_;
};

// x[i] as mantissas of 2^exp: nearest, saturated to ±127.
void quantize_inputs(const float* x, size_t n, int exp, int8_t* q) {
  for (size_t i = 0; i < n; ++i) {
    const long m = std::lround(std::ldexp(x[i], -exp));
    q[i] = static_cast<int8_t>(m > 127 ? 127 : m < -127 ? -127 : m);
  }
}

class InputSource : public BatchSource {
 public:
  InputSource(const float* x, const uint8_t* labels, int64_t n, int64_t item_numel, int64_t batch,
              int int8_exp)
      : x_(x), labels_(labels), n_(n), item_(item_numel), batch_(batch), exp_(int8_exp) {}
  void start_epoch(int64_t) override {}
  int64_t batches_per_epoch() const override { return (n_ + batch_ - 1) / batch_; }
  int64_t fill(int64_t index, float* x, uint8_t* labels, RowShare share = {}) const override {
    const auto [begin, rows] = range(index, share);
    std::copy(x_ + begin * item_, x_ + (begin + rows) * item_, x);
    return labeled(index, labels);
  }
  int64_t fill(int64_t index, int8_t* x, uint8_t* labels, RowShare share = {}) const override {
    const auto [begin, rows] = range(index, share);
    quantize_inputs(x_ + begin * item_, static_cast<size_t>(rows * item_), exp_, x);
    return labeled(index, labels);
  }

 private:
  // The first row and the rows of batch `index` (a share's, with one).
  std::pair<int64_t, int64_t> range(int64_t index, RowShare share) const {
    const int64_t first = index * batch_, rows = std::min(batch_, n_ - first);
    return {first + share.begin(rows), share.end(rows) - share.begin(rows)};
  }
  int64_t labeled(int64_t index, uint8_t* labels) const {
    const int64_t first = index * batch_, rows = std::min(batch_, n_ - first);
    if (labels && labels_) std::copy(labels_ + first, labels_ + first + rows, labels);
    return rows;
  }
  const float* x_;
  const uint8_t* labels_;
  int64_t n_, item_, batch_;
  int exp_;
};

class PointSource : public BatchSource {
 public:
  PointSource(const PointCloudSet& data, int64_t batch, int64_t points, bool train, uint64_t seed)
      : batcher_(data, batch, points, train, seed) {}
  void start_epoch(int64_t epoch) override { batcher_.start_epoch(epoch); }
  int64_t batches_per_epoch() const override { return batcher_.batches_per_epoch(); }
  int64_t fill(int64_t index, float* x, uint8_t* labels, RowShare share = {}) const override {
    return batcher_.fill(index, x, labels, share);
  }
  int64_t fill(int64_t index, int8_t* x, uint8_t* labels, RowShare share = {}) const override {
    std::vector<float> f(static_cast<size_t>(batcher_.rows(index) * batcher_.item_shape().numel()));
    const int64_t rows = batcher_.fill(index, f.data(), labels, share);
    quantize_inputs(f.data(), f.size(), kPointExp, x);
    return rows;
  }

 private:
  PointBatcher batcher_;
};

template <typename Splits>
const auto& split_of(const Splits& s, Split split) {
  return split == Split::kTrain ? s.train : split == Split::kVal ? s.val : s.test;
}

}  // namespace

RunData::RunData(DataSplits images)
    : data_(std::move(images)),
      norm_(compute_normalization(std::get<DataSplits>(data_).train)),
      quantizer_(input_quantizer(norm_.mean, norm_.std)) {}

RunData::RunData(PointSplits clouds, int64_t points) : data_(std::move(clouds)), points_(points) {
  check_sample_count(points, std::get<PointSplits>(data_).train.points_per_cloud);
}

RunData RunData::load(const std::string& name_or_path, const DataOptions& options, int64_t points) {
  std::error_code ec;
  if (is_point_data_set(name_or_path) ||
      std::filesystem::exists(std::filesystem::path(name_or_path) / "train_files.txt", ec))
    return RunData(load_point_data(name_or_path, options), points);
  return RunData(load_data(name_or_path, options));
}

Shape RunData::item_shape() const {
  if (is_point_cloud()) return Shape{3, 1, points_};
  return std::get<DataSplits>(data_).train.item_shape;
}

int RunData::num_classes() const {
  return std::visit([](const auto& s) { return s.train.num_classes; }, data_);
}

int64_t RunData::size(Split split) const {
  return std::visit([&](const auto& s) { return split_of(s, split).size(); }, data_);
}

void RunData::set_normalization(const Normalization& norm) {
  if (is_point_cloud()) return;
  norm_ = norm;
  quantizer_ = input_quantizer(norm.mean, norm.std);
}

int RunData::int8_exp() const {
  return is_point_cloud() ? kPointExp : quantizer_.exp;
}

std::unique_ptr<BatchSource> RunData::batches(Split split, int64_t batch, bool train,
                                              uint64_t seed) const {
  if (is_point_cloud())
    return std::make_unique<PointSource>(split_of(std::get<PointSplits>(data_), split), batch,
                                         points_, train, seed);
  return std::make_unique<ImageSource>(split_of(std::get<DataSplits>(data_), split), batch, norm_,
                                       train, seed, quantizer_);
}

std::unique_ptr<BatchSource> RunData::batches_of(const Dataset& images, int64_t batch) const {
  if (is_point_cloud())
    throw InputError("this run trains on point clouds: give its inputs as float arrays");
  if (images.item_shape != item_shape())
    throw InputError("images of shape " + images.item_shape.str() + ": this run's are " +
                     item_shape().str());
  return std::make_unique<ImageSource>(images, batch, norm_, false, 0, quantizer_);
}

std::unique_ptr<BatchSource> input_batches(const float* x, const uint8_t* labels, int64_t n,
                                           int64_t item_numel, int64_t batch, int int8_exp) {
  ZT_ASSERT(n >= 0 && item_numel > 0 && batch > 0);
  return std::make_unique<InputSource>(x, labels, n, item_numel, batch, int8_exp);
}

}  // namespace zotrain
