// An image classification data set held as uint8 pixels, as a device would store it. Pixels become
// floats only when a batch is copied into the network's input buffer (see Batcher).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zotrain/core/rng.h"
#include "zotrain/core/shape.h"

namespace zotrain {

struct Dataset {
  std::string name;             // "mnist", "fashion-mnist" or the folder path
  Shape item_shape;             // {C, H, W}, e.g. {1, 28, 28}
  std::vector<uint8_t> pixels;  // size() * item_numel(), item after item, each [C, H, W]
  std::vector<uint8_t> labels;  // size(), each < num_classes
  int num_classes = 0;

  int64_t size() const { return static_cast<int64_t>(labels.size()); }
  int64_t item_numel() const { return item_shape.numel(); }
  const uint8_t* item(int64_t i) const { return pixels.data() + i * item_numel(); }
  // The examples at `indices`, in that order, with the same name, shape and classes.
  Dataset subset(const std::vector<int64_t>& indices) const;
};

// Applied to a pixel p as (p / 255 - mean) / std.
struct Normalization {
  float mean = 0, std = 1;
};

// The mean and standard deviation of p / 255 over all pixels of `data` (std = 1 if all pixels are
// equal, so that normalizing never divides by zero). Compute it on the training split and use it
// for every split.
Normalization compute_normalization(const Dataset& data);

// Loads an images/labels pair of IDX files: images [N, H, W] (one channel) or [N, C, H, W], labels
// [N]. With num_classes = 0 the class count is max label + 1 (at least 2); otherwise every label
// must be below num_classes. Throws InputError naming the file at fault.
Dataset load_idx_pair(const std::string& images_path, const std::string& labels_path,
                      const std::string& name, int num_classes = 0);

// A uniformly random permutation of 0..n-1 (Fisher-Yates driven by `rng`): the same for the same
// Rng seed and stream on any platform, unlike std::shuffle.
std::vector<int64_t> random_permutation(int64_t n, Rng& rng);

}  // namespace zotrain
