#include "zotrain/kernels/pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/activation.h"
#include "kernels/global_max_pool.h"
#include "kernels/kernel_isas.h"
#include "kernels/reference.h"
#include "test_util.h"
#include "zotrain/core/rng.h"

namespace zotrain {
namespace {

using test::all_close;
using test::for_each_kernel_isa;
using test::random_uniform;

// Non-overlapping, overlapping (k > stride), gapped (k < stride) windows and floor sizes.
std::vector<ref::PoolShape> pool_cases() {
  std::vector<ref::PoolShape> cases = {
      {3, 4, 4, 2, 2}, {2, 7, 5, 2, 2}, {2, 7, 6, 3, 2}, {1, 5, 5, 5, 1}, {2, 8, 7, 2, 3}};
  Rng rng(12, 0);
  for (int i = 0; i < 10; ++i) {
    int64_t k = 1 + rng.below(4);
    cases.push_back({1 + rng.below(3), k + rng.below(6), k + rng.below(6), k, 1 + rng.below(3)});
  }
  return cases;
}

// Padded max pooling (ResNet's 3x3 windows of stride 2 and padding 1, and random ones): windows
// clipped at every edge.
std::vector<ref::PoolShape> padded_cases() {
  std::vector<ref::PoolShape> cases = {{2, 8, 8, 3, 2, 1},
                                       {2, 7, 9, 3, 2, 1},
                                       {1, 5, 4, 2, 1, 1},
                                       {3, 6, 6, 4, 3, 2},
                                       {1, 2, 3, 3, 1, 2}};
  Rng rng(13, 0);
  for (int i = 0; i < 10; ++i) {
    const int64_t k = 2 + rng.below(3), pad = 1 + rng.below(k - 1);
    cases.push_back(
        {1 + rng.below(3), 1 + rng.below(7), 1 + rng.below(7), k, 1 + rng.below(3), pad});
    auto& c = cases.back();
    c.h = std::max(c.h, k - 2 * pad), c.w = std::max(c.w, k - 2 * pad);
  }
  return cases;
}

kernels::Pool2dGeometry geometry(const ref::PoolShape& s) {
  return kernels::Pool2dGeometry::make(s.h, s.w, s.k, s.stride, s.pad);
}

std::string describe(const ref::PoolShape& s) {
  return (::testing::Message() << s.planes << "x" << s.h << "x" << s.w << " k" << s.k << " s"
                               << s.stride << " p" << s.pad)
      .GetString();
}

// The pooling kernels of case s on input x against the reference: max forward and backward,
// and with `average` the average pooling too. Outputs start as garbage to check that every
// element is overwritten.
void expect_pools_match(const ref::PoolShape& s, const Tensor& x, bool average) {
  SCOPED_TRACE(describe(s));
  const auto g = geometry(s);
  ASSERT_EQ(g.out_h, s.out_h());
  ASSERT_EQ(g.out_w, s.out_w());
  Tensor dy = random_uniform(Shape{s.y_numel()}, 5, 1);
  const ref::Vec x64 = ref::to_vec(x), dy64 = ref::to_vec(dy);
  Tensor y = random_uniform(Shape{s.y_numel()}, 5, 2);
  Tensor dx = random_uniform(Shape{s.x_numel()}, 5, 3);

  kernels::max_pool2d_forward(g, s.planes, x.data(), y.data());
  EXPECT_TRUE(all_close("max y", y.data(), ref::max_pool2d(s, x64), 0.0));
  kernels::max_pool2d_backward(g, s.planes, x.data(), dy.data(), dx.data());
  EXPECT_TRUE(all_close("max dx", dx.data(), ref::max_pool2d_backward(s, x64, dy64), 1e-6));
  if (!average) return;
  kernels::avg_pool2d_forward(g, s.planes, x.data(), y.data());
  EXPECT_TRUE(all_close("avg y", y.data(), ref::avg_pool2d(s, x64), 1e-6));
  kernels::avg_pool2d_backward(g, s.planes, dy.data(), dx.data());
  EXPECT_TRUE(all_close("avg dx", dx.data(), ref::avg_pool2d_backward(s, dy64), 1e-6));
}

TEST(KernelPool, MatchesReference) {
  for (const auto& s : pool_cases())
    expect_pools_match(s, random_uniform(Shape{s.x_numel()}, 5, 0), true);
}

// Average pooling has no padding.
TEST(KernelPool, PaddedMaxMatchesReference) {
  for (const auto& s : padded_cases()) {
    // All negative: a padding that counted as 0 would win every edge window.
    Tensor x = random_uniform(Shape{s.x_numel()}, 5, 0);
    for (int64_t i = 0; i < x.numel(); ++i) x[i] = -1.0f - std::fabs(x[i]);
    expect_pools_match(s, x, false);
  }
}

// On a constant plane every window is a tie: the gradient goes to each window's top-left pixel.
TEST(KernelPool, MaxTiesGoToFirstInScanOrder) {
  auto g = kernels::Pool2dGeometry::make(5, 5, 3, 2);  // four overlapping windows
  std::vector<float> x(25, 1.5f), y(4), dx(25, -1.0f);
  std::vector<float> dy = {1.0f, 2.0f, 3.0f, 4.0f};
  kernels::max_pool2d_forward(g, 1, x.data(), y.data());
  for (float v : y) EXPECT_EQ(v, 1.5f);
  kernels::max_pool2d_backward(g, 1, x.data(), dy.data(), dx.data());
  std::vector<float> want(25, 0.0f);
  want[0] = 1.0f, want[2] = 2.0f, want[10] = 3.0f, want[12] = 4.0f;
  EXPECT_EQ(dx, want);
}

// The vectorized 2x2 stride-2 path keeps the same rule, and zeroes the odd last row and column
// that no window covers.
TEST(KernelPool, MaxTiesGoToFirstInScanOrder2x2) {
  auto g = kernels::Pool2dGeometry::make(3, 5, 2, 2);    // windows (1, 3 / 3, 2) and (4, 4 / 4, 4)
  std::vector<float> x = {1.0f, 3.0f, 4.0f, 4.0f, 9.0f,  //
                          3.0f, 2.0f, 4.0f, 4.0f, 9.0f,  //
                          9.0f, 9.0f, 9.0f, 9.0f, 9.0f};
  std::vector<float> y(2), dx(15, -1.0f), dy = {1.0f, 2.0f};
  kernels::max_pool2d_forward(g, 1, x.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{3.0f, 4.0f}));
  kernels::max_pool2d_backward(g, 1, x.data(), dy.data(), dx.data());
  std::vector<float> want(15, 0.0f);
  want[1] = 1.0f, want[2] = 2.0f;
  EXPECT_EQ(dx, want);
}

// The vector kernels of 2x2 windows keep the scan-order rule bit for bit where values tie:
// -0 against 0 and NaNs (which no comparison takes over from, nor lets take over), at every row
// width (scalar rows, whole vectors and overlapping last vectors) and on odd sizes.
TEST(KernelPool, Max2x2VectorsKeepScanOrderBits) {
  const float kValues[] = {0.0f, -0.0f, 1.0f, -1.0f, std::numeric_limits<float>::quiet_NaN()};
  for_each_kernel_isa([&] {
    Rng rng(31, 0);
    for (int64_t w = 2; w <= 21; ++w)
      for (int64_t h : {2, 3, 6}) {
        SCOPED_TRACE(::testing::Message() << h << "x" << w);
        const auto g = kernels::Pool2dGeometry::make(h, w, 2, 2);
        const int64_t planes = 3;
        std::vector<float> x(planes * h * w), y(planes * g.out_plane(), 7.0f);
        for (float& v : x) v = kValues[rng.below(5)];
        kernels::max_pool2d_forward(g, planes, x.data(), y.data());
        for (int64_t p = 0; p < planes; ++p)
          for (int64_t oh = 0; oh < g.out_h; ++oh)
            for (int64_t ow = 0; ow < g.out_w; ++ow) {
              const float* win = x.data() + p * h * w + 2 * oh * w + 2 * ow;
              float best = win[0];
              for (float v : {win[1], win[w], win[w + 1]})
                if (v > best) best = v;
              const float got = y[p * g.out_plane() + oh * g.out_w + ow];
              ASSERT_EQ(std::memcmp(&got, &best, sizeof got), 0)
                  << "plane " << p << " at " << oh << "," << ow << ": " << got << " vs " << best;
            }
      }
  });
}

// The fused backward of a ReLU (or ReLU6) and the max pooling after it equals the two backward
// passes in turn, bit for bit: non-overlapping, overlapping and gapped windows, maxima that are
// 0, negative, at the cap or ties.
TEST(KernelPool, MaxBackwardThroughReluEqualsTheTwoBackwardPasses) {
  std::vector<ref::PoolShape> cases = pool_cases();
  for (int64_t w : {8, 9, 14, 17, 28})  // 2x2 rows of whole and overlapping vectors
    for (int64_t h : {4, 7}) cases.push_back({2, h, w, 2, 2});
  for_each_kernel_isa([&] {
    for (float cap : {kernels::kNoCap, 6.0f})
      for (const auto& s : cases) {
        SCOPED_TRACE(describe(s) + (cap == 6.0f ? " relu6" : " relu"));
        const auto g = geometry(s);
        Tensor x = random_uniform(Shape{s.x_numel()}, 7, 0);
        for (int64_t i = 0; i < x.numel(); ++i) {  // a ReLU(6)'s outputs, with ties
          const float v = std::round(x[i] * 8.0f);
          x[i] = v < 0.0f ? 0.0f : (v > cap ? cap : v);
        }
        const Tensor dy = random_uniform(Shape{s.y_numel()}, 7, 1);
        std::vector<float> pooled(s.x_numel(), -5.0f), want(s.x_numel(), -5.0f),
            got(s.x_numel(), -5.0f);
        kernels::max_pool2d_backward(g, s.planes, x.data(), dy.data(), pooled.data());
        kernels::relu_backward(s.x_numel(), x.data(), pooled.data(), want.data(), cap);
        kernels::max_pool2d_backward_relu(g, s.planes, x.data(), dy.data(), got.data(), cap);
        ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0);
      }
  });
}

// The interleaved running maxima give std::max_element's value at every length (partial and
// whole groups of eight, the maximum in any lane or the tail), for f32 and int8.
TEST(KernelPool, GlobalMaxMatchesMaxElement) {
  Rng rng(21, 0);
  for (int64_t p = 1; p <= 40; ++p)
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<float> x(p);
      std::vector<int8_t> q(p);
      for (int64_t i = 0; i < p; ++i) {
        x[i] = rng.uniform(-1.0f, 1.0f);
        q[i] = static_cast<int8_t>(static_cast<int>(rng.below(256)) - 128);
      }
      float y = 0;
      int8_t yq = 0;
      kernels::global_max_pool_forward(x.data(), 1, p, &y);
      kernels::global_max_pool_forward(q.data(), 1, p, &yq);
      ASSERT_EQ(y, *std::max_element(x.begin(), x.end())) << p;
      ASSERT_EQ(yq, *std::max_element(q.begin(), q.end())) << p;
    }
}

}  // namespace
}  // namespace zotrain
