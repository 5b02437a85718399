// Helpers shared by the tests.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace zotrain::test {

// A fresh empty directory under the system temp folder, removed with the object.
// Whether a real data set (resolved like --data NAME) is present. When it is not, tests skip —
// or fail when ZOTRAIN_REQUIRE_DATA=1 (CI, which installs the data sets).
bool have_data_set(const std::string& name);
#define ZT_REQUIRE_DATA_SET(name)                                                           \
  do {                                                                                      \
    if (!::zotrain::test::have_data_set(name)) {                                            \
      if (std::getenv("ZOTRAIN_REQUIRE_DATA")) FAIL() << "data set " << name << " missing"; \
      GTEST_SKIP() << "data set " << name << " is not installed (run scripts/setup.sh)";    \
    }                                                                                       \
  } while (0)

// Skips a test that writes or reads point-cloud (HDF5) files in a build without HDF5
// (ZOTRAIN_WITH_HDF5 off: device and cross builds).
bool have_hdf5();
#define ZT_REQUIRE_HDF5()                                                                      \
  do {                                                                                         \
    if (!::zotrain::test::have_hdf5())                                                         \
      GTEST_SKIP() << "built without HDF5 (ZOTRAIN_WITH_HDF5): no point-cloud files to write"; \
  } while (0)

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace zotrain::test

// ---- Random tensors and comparisons (kernels and nn tests) ----
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "zotrain/core/tensor.h"

namespace zotrain::test {

// A tensor of uniform values in [lo, hi) drawn from Rng(seed, stream).
Tensor random_uniform(const Shape& shape, uint64_t seed, uint64_t stream, float lo = -1.0f,
                      float hi = 1.0f);

// Success when a and b have the same shape and bit-identical elements; otherwise names the
// first element that differs.
::testing::AssertionResult bitwise_equal(const Tensor& a, const Tensor& b);

// Success when |actual[i] - expected[i]| <= tol * max(1, |expected[i]|) for every i; otherwise
// names the worst element (NaN counts as the worst).
::testing::AssertionResult all_close(const std::string& what, const float* actual,
                                     const std::vector<double>& expected, double tol);

}  // namespace zotrain::test
