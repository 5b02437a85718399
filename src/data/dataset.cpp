#include "zotrain/data/dataset.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "data/idx.h"
#include "gather.h"
#include "zotrain/core/error.h"

namespace zotrain {

Dataset Dataset::subset(const std::vector<int64_t>& indices) const {
  Dataset out;
  out.name = name;
  out.item_shape = item_shape;
  out.num_classes = num_classes;
  out.pixels = detail::gather(pixels, item_numel(), indices);
  out.labels = detail::gather(labels, 1, indices);
  return out;
}

Normalization compute_normalization(const Dataset& data) {
  // A histogram makes the sums exact integers; only the final moments are floating point.
  std::array<int64_t, 256> count{};
  for (uint8_t p : data.pixels) ++count[p];
  double n = 0, sum = 0, sum_sq = 0;
  for (int p = 0; p < 256; ++p) {
    double c = static_cast<double>(count[p]), v = p / 255.0;
    n += c;
    sum += c * v;
    sum_sq += c * v * v;
  }
  Normalization norm;
  if (n == 0) return norm;
  double mean = sum / n;
  double var = std::max(0.0, sum_sq / n - mean * mean);
  norm.mean = static_cast<float>(mean);
  norm.std = var > 0 ? static_cast<float>(std::sqrt(var)) : 1.0f;
  return norm;
}

Dataset load_idx_pair(const std::string& images_path, const std::string& labels_path,
                      const std::string& name, int num_classes) {
  IdxArray images = read_idx(images_path);
  IdxArray labels = read_idx(labels_path);
  const auto& d = images.dims;
  if (d.size() != 3 && d.size() != 4)
    throw InputError(images_path + ": images have " + std::to_string(d.size()) +
                     " dims; expected 3 (count, height, width) or 4 (count, channels, height, "
                     "width)");
  if (labels.dims.size() != 1)
    throw InputError(labels_path + ": labels have " + std::to_string(labels.dims.size()) +
                     " dims; expected 1 (count)");
  const int64_t n = d[0];
  if (n == 0) throw InputError(images_path + ": holds no images (count 0)");
  if (labels.dims[0] != n)
    throw InputError(labels_path + ": label count " + std::to_string(labels.dims[0]) +
                     " does not match image count " + std::to_string(n) + " in " + images_path);

  Dataset ds;
  ds.name = name;
  ds.item_shape = d.size() == 3 ? Shape{1, d[1], d[2]} : Shape{d[1], d[2], d[3]};
  if (ds.item_numel() == 0)
    throw InputError(images_path + ": image size " + ds.item_shape.str() +
                     " is empty; every dim must be positive");

  const int max_label = *std::max_element(labels.data.begin(), labels.data.end());
  if (num_classes == 0) {
    num_classes = std::max(2, max_label + 1);
  } else if (max_label >= num_classes) {
    // Name the first offender: the one a user would find first in the file.
    auto bad = std::find_if(labels.data.begin(), labels.data.end(),
                            [&](uint8_t l) { return l >= num_classes; });
    throw InputError(labels_path + ": label " + std::to_string(*bad) + " at index " +
                     std::to_string(bad - labels.data.begin()) +
                     " is out of range; expected 0 to " + std::to_string(num_classes - 1) + " (" +
                     std::to_string(num_classes) + " classes)");
  }
  ds.num_classes = num_classes;
  ds.pixels = std::move(images.data);
  ds.labels = std::move(labels.data);
  return ds;
}

std::vector<int64_t> random_permutation(int64_t n, Rng& rng) {
  ZT_ASSERT(n >= 0 && n <= int64_t{UINT32_MAX});
  std::vector<int64_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), int64_t{0});
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[rng.below(static_cast<uint32_t>(i + 1))]);
  return p;
}

}  // namespace zotrain
