#include "kernels/gaussian.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <vector>

#include "kernels/kernel_isas.h"
#include "zotrain/core/rng.h"

namespace zotrain {
namespace {

// Random words plus the extremes: U = 2^-24 (the largest r) and U = 1 (r = 0), and angles on
// and next to the quadrant boundaries, where the range reduction switches quadrant.
std::vector<uint32_t> test_words() {
  std::vector<uint32_t> w;
  Rng rng(5, 1);
  for (int i = 0; i < 20000; ++i)
    for (int k = 0; k < 4; ++k) w.push_back(rng.next_u32());
  const uint32_t us[] = {0u, 0xFFu, 0x100u, 0xFFFFFFFFu, 0x7FFFFFFFu, 0xB504F300u};
  const uint32_t quarter = 1u << 30;
  for (uint32_t u : us)
    for (uint32_t q = 0; q < 4; ++q)
      for (int64_t d : {-512, -256, 0, 256, 512, 0x7FFF00}) {
        w.push_back(u);
        w.push_back(static_cast<uint32_t>(q * quarter + d));
        w.push_back(0);
        w.push_back(0);
      }
  return w;
}

TEST(KernelGaussian, MatchesBoxMullerInDouble) {
  const std::vector<uint32_t> w = test_words();
  const int64_t pairs = static_cast<int64_t>(w.size() / 4);
  std::vector<float> z(2 * pairs);
  kernels::gaussian_pairs(pairs, w.data(), z.data());
  for (int64_t b = 0; b < pairs; ++b) {
    const double u = ((w[4 * b] >> 8) + 1) * 0x1p-24, v = (w[4 * b + 1] >> 8) * 0x1p-24;
    const double r = std::sqrt(-2 * std::log(u)), a = 2 * M_PI * v;
    // A few float roundings of r (at most 5.8) and of the unit vector.
    const double tol = 4e-7 * (r + 1);
    ASSERT_NEAR(z[2 * b], r * std::cos(a), tol) << "pair " << b << " u " << u << " v " << v;
    ASSERT_NEAR(z[2 * b + 1], r * std::sin(a), tol) << "pair " << b << " u " << u << " v " << v;
  }
}

// Each pair's values depend on its words only, not on its lane or the length of the run.
TEST(KernelGaussian, DoesNotDependOnTheRun) {
  const std::vector<uint32_t> w = test_words();
  const int64_t pairs = 1001;
  std::vector<float> all(2 * pairs), one(2);
  kernels::gaussian_pairs(pairs, w.data(), all.data());
  for (int64_t b = 0; b < pairs; ++b) {
    kernels::gaussian_pairs(1, w.data() + 4 * b, one.data());
    ASSERT_EQ(one[0], all[2 * b]);
    ASSERT_EQ(one[1], all[2 * b + 1]);
  }
}

// Every kernel set (16 lanes in the AVX-512 ones) gives the bits of the base build (8 lanes on
// x86-64, 4 elsewhere; scripts/cross.sh --subset compares the two architectures), for runs
// of every length around both widths.
TEST(KernelGaussian, SameBitsInEveryKernelSet) {
  const std::vector<uint32_t> w = test_words();
  const auto values = [&](int64_t pairs) {
    std::vector<float> z(2 * pairs);
    kernels::gaussian_pairs(pairs, w.data(), z.data());
    return z;
  };
  std::vector<std::vector<float>> want;
  const int64_t lengths[] = {1, 7, 8, 9, 15, 16, 17, 33, 1001};
  {
    struct Restore {
      kernels::KernelIsa isa = kernels::active_kernel_isa();
      ~Restore() { kernels::set_active_kernel_isa(isa); }
    } restore;
    kernels::set_active_kernel_isa(kernels::KernelIsa::kPortable);
    for (int64_t n : lengths) want.push_back(values(n));
  }
  test::for_each_kernel_isa([&] {
    for (size_t k = 0; k < std::size(lengths); ++k) {
      const std::vector<float> z = values(lengths[k]);
      for (size_t i = 0; i < z.size(); ++i)
        ASSERT_EQ(z[i], want[k][i]) << "pairs " << lengths[k] << " value " << i;
    }
  });
}

}  // namespace
}  // namespace zotrain
