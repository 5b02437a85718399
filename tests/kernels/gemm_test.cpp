#include "kernels/gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "kernels/kernel_isas.h"
#include "kernels/reference.h"
#include "test_util.h"
#include "zotrain/core/rng.h"

namespace zotrain {
namespace {

using test::random_uniform;

// A row-major matrix of `rows` x `cols` stored with leading dimension cols + 3, so that a kernel
// that ignores the leading dimension is caught.
struct Padded {
  int64_t rows, cols;
  int64_t ld() const { return cols + 3; }
  Shape shape() const { return Shape{rows, ld()}; }
};

using GemmFn = decltype(&kernels::gemm_f32);

// Every transpose and (alpha, beta) against the double-precision reference.
void expect_all_transposes_match(GemmFn gemm) {
  const int64_t m = 7, n = 5, k = 13;
  uint64_t stream = 0;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (auto [alpha, beta] : {std::pair{1.0f, 0.0f}, {1.0f, 1.0f}, {-0.5f, 0.75f}}) {
        SCOPED_TRACE(::testing::Message()
                     << "ta " << ta << " tb " << tb << " alpha " << alpha << " beta " << beta);
        Padded a = ta ? Padded{k, m} : Padded{m, k};
        Padded b = tb ? Padded{n, k} : Padded{k, n};
        Padded c{m, n};
        Tensor ma = random_uniform(a.shape(), 1, stream++);
        Tensor mb = random_uniform(b.shape(), 1, stream++);
        Tensor mc = random_uniform(c.shape(), 1, stream++);
        ref::Vec want = ref::gemm(ta, tb, m, n, k, alpha, ref::to_vec(ma), a.ld(), ref::to_vec(mb),
                                  b.ld(), beta, ref::to_vec(mc), c.ld());
        gemm(ta, tb, m, n, k, alpha, ma.data(), a.ld(), mb.data(), b.ld(), beta, mc.data(), c.ld());
        // The padding columns of C must stay as they were: the reference leaves them too.
        EXPECT_TRUE(test::all_close("c", mc.data(), want, 1e-5));
      }
}

TEST(KernelGemm, ReferenceMatchesDoublePrecision) {
  expect_all_transposes_match(kernels::gemm_f32_ref);
}

TEST(KernelGemm, AllTransposesMatchReference) {
  test::for_each_kernel_isa([] { expect_all_transposes_match(kernels::gemm_f32); });
}

// Random shapes around the tile sizes (6 rows, 8 or 16 columns) and the reduction block (256),
// random transposes and scalars, against gemm_f32_ref.
TEST(KernelGemm, RandomShapesMatchGemmRef) {
  test::for_each_kernel_isa([] {
    Rng rng(21, 0);
    const float scalars[] = {0.0f, 1.0f, -0.5f, 0.75f};
    for (int trial = 0; trial < 40; ++trial) {
      const int64_t m = 1 + rng.below(trial < 30 ? 20 : 70),
                    n = 1 + rng.below(trial < 30 ? 40 : 90);
      const int64_t k = trial % 4 == 0 ? 250 + rng.below(300) : 1 + rng.below(40);
      const bool ta = rng.below(2), tb = rng.below(2);
      const float alpha = trial % 5 == 0 ? 1.0f : scalars[1 + rng.below(3)];
      const float beta = scalars[rng.below(4)];
      SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k << " ta " << ta << " tb " << tb
                                        << " alpha " << alpha << " beta " << beta);
      Padded a = ta ? Padded{k, m} : Padded{m, k};
      Padded b = tb ? Padded{n, k} : Padded{k, n};
      Padded c{m, n};
      Tensor ma = random_uniform(a.shape(), 22, 3 * trial);
      Tensor mb = random_uniform(b.shape(), 22, 3 * trial + 1);
      Tensor want = random_uniform(c.shape(), 22, 3 * trial + 2), got = want.clone();
      kernels::gemm_f32_ref(ta, tb, m, n, k, alpha, ma.data(), a.ld(), mb.data(), b.ld(), beta,
                            want.data(), c.ld());
      kernels::gemm_f32(ta, tb, m, n, k, alpha, ma.data(), a.ld(), mb.data(), b.ld(), beta,
                        got.data(), c.ld());
      EXPECT_TRUE(test::all_close("c", got.data(), ref::to_vec(want), 1e-4));
    }
  });
}

TEST(KernelGemm, BetaZeroDoesNotReadC) {
  test::for_each_kernel_isa([] {
    // Partial tiles in both directions and two reduction blocks.
    const int64_t m = 9, n = 19, k = 300;
    Tensor a = random_uniform(Shape{m, k}, 2, 0), b = random_uniform(Shape{k, n}, 2, 1);
    Tensor c = Tensor::zeros(Shape{m, n});
    c.fill(std::numeric_limits<float>::quiet_NaN());
    kernels::gemm_f32(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
    for (int64_t i = 0; i < c.numel(); ++i) EXPECT_FALSE(std::isnan(c[i])) << i;
  });
}

// gemm.h promises that row and column blocks of a product equal the whole product bit for bit,
// which is what lets layers split a GEMM over threads: for every transpose, with and without
// beta, and with a reduction longer than one block.
TEST(KernelGemm, BlocksGiveBitIdenticalResults) {
  test::for_each_kernel_isa([] {
    const int64_t m = 13, n = 21;
    for (int64_t k : {17, 300})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (float beta : {0.0f, 0.5f}) {
            SCOPED_TRACE(::testing::Message()
                         << "k " << k << " ta " << ta << " tb " << tb << " beta " << beta);
            const int64_t lda = ta ? m : k, ldb = tb ? k : n;
            Tensor a = random_uniform(Shape{m * k}, 3, 0), b = random_uniform(Shape{k * n}, 3, 1);
            Tensor whole = random_uniform(Shape{m, n}, 3, 2);
            Tensor by_rows = whole.clone(), by_cols = whole.clone();
            auto a_row = [&](int64_t i) { return a.data() + (ta ? i : i * lda); };
            auto b_col = [&](int64_t j) { return b.data() + (tb ? j * ldb : j); };
            kernels::gemm_f32(ta, tb, m, n, k, 0.75f, a.data(), lda, b.data(), ldb, beta,
                              whole.data(), n);
            for (int64_t i0 = 0; i0 < m; i0 += 4)
              kernels::gemm_f32(ta, tb, std::min<int64_t>(4, m - i0), n, k, 0.75f, a_row(i0), lda,
                                b.data(), ldb, beta, by_rows.data() + i0 * n, n);
            for (int64_t j0 = 0; j0 < n; j0 += 3)
              kernels::gemm_f32(ta, tb, m, std::min<int64_t>(3, n - j0), k, 0.75f, a.data(), lda,
                                b_col(j0), ldb, beta, by_cols.data() + j0, n);
            EXPECT_TRUE(test::bitwise_equal(by_rows, whole));
            EXPECT_TRUE(test::bitwise_equal(by_cols, whole));
          }
  });
}

TEST(KernelGemm, KernelNameNamesTheActiveIsa) {
  test::for_each_kernel_isa([] {
    const std::string name = kernels::gemm_f32_kernel_name();
    EXPECT_EQ(name.rfind(kernels::kernel_isa_name(kernels::active_kernel_isa()), 0), 0u) << name;
  });
}

}  // namespace
}  // namespace zotrain
