#include "zotrain/kernels/gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "kernels/reference.h"
#include "test_util.h"

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

TEST(KernelGemm, AllTransposesMatchReference) {
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
        kernels::gemm_f32(ta, tb, m, n, k, alpha, ma.data(), a.ld(), mb.data(), b.ld(), beta,
                          mc.data(), c.ld());
        // The padding columns of C must stay as they were: the reference leaves them too.
        EXPECT_TRUE(test::all_close("c", mc.data(), want, 1e-5));
      }
}

TEST(KernelGemm, BetaZeroDoesNotReadC) {
  Tensor a = random_uniform(Shape{3, 4}, 2, 0), b = random_uniform(Shape{4, 5}, 2, 1);
  Tensor c = Tensor::zeros(Shape{3, 5});
  c.fill(std::numeric_limits<float>::quiet_NaN());
  kernels::gemm_f32(false, false, 3, 5, 4, 1.0f, a.data(), 4, b.data(), 5, 0.0f, c.data(), 5);
  for (int64_t i = 0; i < c.numel(); ++i) EXPECT_FALSE(std::isnan(c[i])) << i;
}

// gemm.h promises that row and column blocks of a product equal the whole product bit for bit,
// which is what lets layers split a GEMM over threads.
TEST(KernelGemm, BlocksGiveBitIdenticalResults) {
  const int64_t m = 9, n = 11, k = 17;
  Tensor a = random_uniform(Shape{m, k}, 3, 0), b = random_uniform(Shape{n, k}, 3, 1);
  Tensor whole = random_uniform(Shape{m, n}, 3, 2);
  Tensor by_rows = whole.clone(), by_cols = whole.clone();
  kernels::gemm_f32(false, true, m, n, k, 1.0f, a.data(), k, b.data(), k, 1.0f, whole.data(), n);
  for (int64_t i0 = 0; i0 < m; i0 += 4) {
    int64_t rows = std::min<int64_t>(4, m - i0);
    kernels::gemm_f32(false, true, rows, n, k, 1.0f, a.data() + i0 * k, k, b.data(), k, 1.0f,
                      by_rows.data() + i0 * n, n);
  }
  for (int64_t j0 = 0; j0 < n; j0 += 3) {
    int64_t cols = std::min<int64_t>(3, n - j0);
    kernels::gemm_f32(false, true, m, cols, k, 1.0f, a.data(), k, b.data() + j0 * k, k, 1.0f,
                      by_cols.data() + j0, n);
  }
  EXPECT_TRUE(test::bitwise_equal(by_rows, whole));
  EXPECT_TRUE(test::bitwise_equal(by_cols, whole));
}

}  // namespace
}  // namespace zotrain
