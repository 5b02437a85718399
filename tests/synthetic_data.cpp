#include "synthetic_data.h"

#include <filesystem>

#include "data/idx.h"
#include "zotrain/core/rng.h"

namespace zotrain::test {

namespace {

void write_split(const std::string& dir, const std::string& prefix, int n, Rng& rng) {
  IdxArray images{{n, 28, 28}, std::vector<uint8_t>(static_cast<size_t>(n) * 784)};
  IdxArray labels{{n}, std::vector<uint8_t>(n)};
  for (int i = 0; i < n; ++i) {
    int k = static_cast<int>(rng.below(10));
    labels.data[i] = static_cast<uint8_t>(k);
    uint8_t* img = images.data.data() + static_cast<size_t>(i) * 784;
    for (int p = 0; p < 784; ++p) img[p] = static_cast<uint8_t>(rng.below(80));
    // A 7x7 square on a 4x3 grid of places, jittered by up to 2 pixels.
    int r0 = 2 + (k / 4) * 8 + static_cast<int>(rng.below(3)),
        c0 = 1 + (k % 4) * 6 + static_cast<int>(rng.below(3));
    for (int r = r0; r < r0 + 7; ++r)
      for (int c = c0; c < c0 + 7; ++c) img[r * 28 + c] = static_cast<uint8_t>(180 + rng.below(76));
  }
  write_idx(dir + "/" + prefix + "-images-idx3-ubyte", images, false);
  write_idx(dir + "/" + prefix + "-labels-idx1-ubyte", labels, false);
}

}  // namespace

void write_synthetic_data(const std::string& dir, int n_train, int n_test, unsigned seed) {
  std::filesystem::create_directories(dir);
  Rng rng(seed, 77);
  write_split(dir, "train", n_train, rng);
  write_split(dir, "t10k", n_test, rng);
}

}  // namespace zotrain::test
