#include "zotrain/kernels/conv2d.h"

#include <gtest/gtest.h>

#include <vector>

#include "kernels/reference.h"
#include "test_util.h"
#include "zotrain/core/rng.h"

namespace zotrain {
namespace {

using test::all_close;
using test::random_uniform;

// Fixed corner cases (1x1, stride 2 with padding, kernel larger than the unpadded input, a
// stride that skips pixels, non-square input) and random geometries.
std::vector<ref::ConvShape> conv_cases(int64_t images) {
  std::vector<ref::ConvShape> cases = {
      {images, 3, 7, 6, 4, 3, 1, 0}, {images, 3, 7, 6, 4, 3, 2, 1}, {images, 2, 5, 5, 3, 5, 1, 2},
      {images, 4, 4, 3, 2, 1, 1, 0}, {images, 1, 2, 2, 2, 3, 1, 1}, {images, 2, 8, 7, 3, 2, 3, 0},
  };
  Rng rng(11, 0);
  for (int i = 0; i < 20; ++i) {
    int64_t k = 1 + rng.below(4), pad = rng.below(static_cast<uint32_t>(k));
    int64_t h = k + rng.below(6), w = k + rng.below(6);
    cases.push_back({images, 1 + rng.below(4), h, w, 1 + rng.below(4), k, 1 + rng.below(3), pad});
  }
  return cases;
}

kernels::Conv2dGeometry geometry(const ref::ConvShape& s) {
  return kernels::Conv2dGeometry::make(s.c, s.h, s.w, s.out_c, s.k, s.stride, s.pad);
}

std::string describe(const ref::ConvShape& s) {
  return (::testing::Message() << "c" << s.c << " " << s.h << "x" << s.w << " out" << s.out_c
                               << " k" << s.k << " s" << s.stride << " p" << s.pad)
      .GetString();
}

TEST(KernelConv2d, GeometryMatchesReference) {
  for (const auto& s : conv_cases(1)) {
    SCOPED_TRACE(describe(s));
    auto g = geometry(s);
    EXPECT_EQ(g.out_h, s.out_h());
    EXPECT_EQ(g.out_w, s.out_w());
    EXPECT_EQ(g.col_floats(), s.c * s.k * s.k * s.out_h() * s.out_w());
  }
}

TEST(KernelConv2d, ForwardMatchesDirectConvolution) {
  for (const auto& s : conv_cases(1))
    for (bool bias : {true, false}) {
      SCOPED_TRACE(describe(s) + (bias ? " bias" : " no bias"));
      auto g = geometry(s);
      Tensor x = random_uniform(Shape{s.x_numel()}, 1, 0);
      Tensor w = random_uniform(Shape{s.w_numel()}, 1, 1);
      Tensor b = random_uniform(Shape{s.out_c}, 1, 2);
      std::vector<float> y(s.y_numel()), col(g.col_floats());
      kernels::conv2d_forward(g, x.data(), w.data(), bias ? b.data() : nullptr, y.data(),
                              col.data());
      ref::Vec want =
          ref::conv2d(s, ref::to_vec(x), ref::to_vec(w), bias ? ref::to_vec(b) : ref::Vec{});
      EXPECT_TRUE(all_close("y", y.data(), want, 1e-5));
    }
}

TEST(KernelConv2d, BackwardDataMatchesReference) {
  for (const auto& s : conv_cases(1)) {
    SCOPED_TRACE(describe(s));
    auto g = geometry(s);
    Tensor dy = random_uniform(Shape{s.y_numel()}, 2, 0);
    Tensor w = random_uniform(Shape{s.w_numel()}, 2, 1);
    Tensor dx = random_uniform(Shape{s.x_numel()}, 2, 2);  // overwritten
    std::vector<float> col(g.col_floats());
    kernels::conv2d_backward_data(g, dy.data(), w.data(), dx.data(), col.data());
    EXPECT_TRUE(all_close("dx", dx.data(),
                          ref::conv2d_backward_data(s, ref::to_vec(dy), ref::to_vec(w)), 1e-5));
  }
}

// Over two images, one call each: dw and db accumulate onto their initial values.
TEST(KernelConv2d, BackwardWeightAccumulatesOverImages) {
  for (const auto& s : conv_cases(2)) {
    SCOPED_TRACE(describe(s));
    auto g = geometry(s);
    Tensor x = random_uniform(Shape{s.x_numel()}, 3, 0);
    Tensor dy = random_uniform(Shape{s.y_numel()}, 3, 1);
    Tensor dw = random_uniform(Shape{s.w_numel()}, 3, 2);
    Tensor db = random_uniform(Shape{s.out_c}, 3, 3);
    ref::Vec want_dw = ref::conv2d_backward_weight(s, ref::to_vec(x), ref::to_vec(dy));
    ref::Vec want_db = ref::to_vec(db);
    for (int64_t i = 0; i < s.y_numel(); ++i) want_db[(i / g.out_plane()) % s.out_c] += dy[i];
    for (int64_t i = 0; i < s.w_numel(); ++i) want_dw[i] += dw[i];
    std::vector<float> col(g.col_floats());
    for (int64_t n = 0; n < s.n; ++n)
      kernels::conv2d_backward_weight(g, x.data() + n * g.in_numel(), dy.data() + n * g.out_numel(),
                                      dw.data(), db.data(), col.data());
    EXPECT_TRUE(all_close("dw", dw.data(), want_dw, 1e-5));
    EXPECT_TRUE(all_close("db", db.data(), want_db, 1e-5));
  }
}

// <im2col(x), c> == <x, col2im(c)>: col2im is the exact adjoint, padding included.
TEST(KernelConv2d, Col2imIsAdjointOfIm2col) {
  for (const auto& s : conv_cases(1)) {
    SCOPED_TRACE(describe(s));
    auto g = geometry(s);
    Tensor x = random_uniform(Shape{s.x_numel()}, 4, 0);
    Tensor c = random_uniform(Shape{g.col_floats()}, 4, 1);
    std::vector<float> col(g.col_floats()), back(s.x_numel(), 0.0f);
    kernels::im2col(g, x.data(), col.data());
    kernels::col2im_add(g, c.data(), back.data());
    double lhs = 0.0, rhs = 0.0;
    for (int64_t i = 0; i < g.col_floats(); ++i) lhs += double(col[i]) * c[i];
    for (int64_t i = 0; i < s.x_numel(); ++i) rhs += double(x[i]) * back[i];
    EXPECT_NEAR(lhs, rhs, 1e-5 * (1.0 + std::abs(lhs)));
  }
}

}  // namespace
}  // namespace zotrain
