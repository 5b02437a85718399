#include "zotrain/zo/perturbation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "zotrain/core/error.h"

namespace zotrain::zo {
namespace {

TEST(Perturbation, IsAPureFunctionOfSeedTensorAndIndex) {
  for (Distribution d :
       {Distribution::kGaussian, Distribution::kRademacher, Distribution::kUniform})
    for (float p_zero : {0.0f, 0.3f}) {
      SCOPED_TRACE(std::to_string(static_cast<int>(d)) + " p_zero " + std::to_string(p_zero));
      const PerturbationSpec spec{d, p_zero};
      const int64_t n = 1001;
      std::vector<float> zero(n, 0.0f), whole(n), pieces(n);
      add_perturbation(spec, 42, 3, 1.0f, zero.data(), whole.data(), 0, n);
      // Any split into ranges, in any order, gives the same values (starts inside pairs and
      // inside sign blocks).
      for (int64_t b : {500, 0, 1, 333, 777})
        add_perturbation(spec, 42, 3, 1.0f, zero.data() + b, pieces.data() + b, b,
                         std::min<int64_t>(n, b + 333));
      add_perturbation(spec, 42, 3, 1.0f, zero.data() + 334, pieces.data() + 334, 334, 500);
      EXPECT_EQ(whole, pieces);
      for (int64_t i : {0, 1, 2, 127, 128, 999, 1000})
        EXPECT_EQ(whole[i], perturbation(spec, 42, 3, i));
      EXPECT_NE(perturbation(spec, 42, 4, 7) == whole[7] &&
                    perturbation(spec, 43, 3, 8) == whole[8] &&
                    perturbation(spec, 42, 4, 9) == whole[9] &&
                    perturbation(spec, 43, 3, 10) == whole[10],
                true);
    }
}

// The layout perturbation.h documents: signs 128 to a block of their own stream, the mask from
// the pair blocks' words 2 and 3.
TEST(Perturbation, RademacherSignsAndMasksFollowTheDocumentedBlocks) {
  for (float p_zero : {0.0f, 0.4f}) {
    const PerturbationSpec spec{Distribution::kRademacher, p_zero};
    const int64_t n = 515;
    std::vector<float> z(n);
    perturbation_values(spec, 77, 5, 0, n, z.data());
    int64_t zeros = 0;
    for (int64_t i = 0; i < n; ++i) {
      const auto u = static_cast<uint64_t>(i);
      const Philox4x32 signs = sign_block(77, 5, u / kSignsPerBlock);
      const float sign = (signs[(i % 128) / 32] >> (i % 32)) & 1u ? 1.0f : -1.0f;
      const bool zeroed = u32_to_unit(perturbation_block(77, 5, u / 2)[2 + i % 2]) < p_zero;
      ASSERT_EQ(z[i], zeroed ? 0.0f : sign) << i << " p_zero " << p_zero;
      zeros += zeroed;
    }
    EXPECT_EQ(zeros > 0, p_zero > 0);
  }
}

TEST(Perturbation, ValuesAndTheMagnitudeMaskFollowTheSameStream) {
  PerturbationSpec spec{Distribution::kGaussian, 0.0f};
  const int64_t n = 700;
  std::vector<float> src(n), masked(n), z(n - 3);
  for (int64_t i = 0; i < n; ++i) src[i] = static_cast<float>(i % 7) - 3.0f;  // |x| in 0..3
  // Values from an odd start are element-aligned: z[k] is element 3 + k.
  perturbation_values(spec, 5, 2, 3, n, z.data());
  for (int64_t k = 0; k < n - 3; ++k) ASSERT_EQ(z[k], perturbation(spec, 5, 2, 3 + k)) << k;
  // Only the elements with |x| <= 1.5 move, each by what the unmasked pass gives it.
  add_perturbation(spec, 5, 2, 0.25f, src.data(), masked.data(), 0, n, 1.5f);
  for (int64_t i = 0; i < n; ++i) {
    const float moved = src[i] + 0.25f * perturbation(spec, 5, 2, i);
    EXPECT_EQ(masked[i], std::fabs(src[i]) <= 1.5f ? moved : src[i]) << i;
  }
}

TEST(Perturbation, DistributionsHaveZeroMeanUnitVarianceAndTheRightSparsity) {
  const int64_t n = 400000;
  for (Distribution d :
       {Distribution::kGaussian, Distribution::kRademacher, Distribution::kUniform})
    for (float p_zero : {0.0f, 0.5f, 0.9f}) {
      PerturbationSpec spec{d, p_zero};
      double s = 0, s2 = 0, s4 = 0;
      int64_t zeros = 0;
      for (int64_t i = 0; i < n; ++i) {
        double z = perturbation(spec, 9, 1, i);
        s += z, s2 += z * z, s4 += z * z * z * z;
        zeros += z == 0.0;
      }
      const double keep = 1.0 - p_zero;
      EXPECT_NEAR(s / n, 0.0, 0.01) << name_of(d);
      EXPECT_NEAR(s2 / n, keep, 0.01) << name_of(d);
      EXPECT_NEAR(static_cast<double>(zeros) / n, p_zero, 0.005) << name_of(d);
      // The fourth moment tells the distributions apart: 3, 1 and 1.8.
      double kurt = d == Distribution::kGaussian ? 3.0 : d == Distribution::kRademacher ? 1.0 : 1.8;
      EXPECT_NEAR(s4 / n, kurt * keep, 0.05) << name_of(d);
    }
}

TEST(Perturbation, SampleSeedsDifferAndNamesParse) {
  EXPECT_NE(sample_seed(1, 0, 0), sample_seed(1, 0, 1));
  EXPECT_NE(sample_seed(1, 0, 0), sample_seed(1, 1, 0));
  EXPECT_NE(sample_seed(1, 0, 0), sample_seed(2, 0, 0));
  EXPECT_EQ(parse_name<Distribution>("perturbation", "rademacher"), Distribution::kRademacher);
  EXPECT_THROW(parse_name<Distribution>("perturbation", "cauchy"), InputError);
}

}  // namespace
}  // namespace zotrain::zo
