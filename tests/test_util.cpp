#include "test_util.h"

#include <unistd.h>

#include <atomic>

#include "data/point_h5.h"
#include "zotrain/core/error.h"
#include "zotrain/data/registry.h"

namespace zotrain::test {

bool have_hdf5() {
  return hdf5_supported();
}

bool have_data_set(const std::string& name) {
  try {
    resolve_data_dir(name);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("zotrain_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace zotrain::test

// ---- Random tensors and comparisons (kernels and nn tests) ----
#include <algorithm>
#include <cmath>
#include <cstring>

#include "zotrain/core/rng.h"

namespace zotrain::test {

Tensor random_uniform(const Shape& shape, uint64_t seed, uint64_t stream, float lo, float hi) {
  Tensor t = Tensor::zeros(shape);
  Rng rng(seed, stream);
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = rng.uniform(lo, hi);
  return t;
}

::testing::AssertionResult bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape())
    return ::testing::AssertionFailure()
           << "shapes " << a.shape().str() << " and " << b.shape().str() << " differ";
  for (int64_t i = 0; i < a.numel(); ++i)
    if (std::memcmp(a.data() + i, b.data() + i, sizeof(float)) != 0)
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs " << b[i];
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult all_close(const std::string& what, const float* actual,
                                     const std::vector<double>& expected, double tol) {
  double worst = 0.0;
  size_t at = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    double err = std::abs(actual[i] - expected[i]) / std::max(1.0, std::abs(expected[i]));
    if (!(err <= worst)) worst = err, at = i;  // `!(<=)` also takes a NaN
  }
  if (worst <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << what << "[" << at << "] = " << actual[at] << ", expected " << expected[at]
         << " (relative error " << worst << " > " << tol << ")";
}

}  // namespace zotrain::test
