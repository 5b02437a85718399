#include "kernels/conv2d.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/kernel_isas.h"
#include "kernels/reference.h"
#include "test_util.h"
#include "zotrain/core/rng.h"

namespace zotrain {
namespace {

using test::all_close;
using test::random_uniform;

// Fixed corner cases (1x1, MobileNetV2-like pointwise layers, stride 2 with padding, kernel larger
// than the unpadded input, a stride that skips pixels, non-square input), LeNet-5's two
// convolutions, many channels, one channel to one (a depthwise group: direct loops) and random
// geometries. Output channel counts range over partial and several register tiles.
std::vector<ref::ConvShape> conv_cases(int64_t images) {
  std::vector<ref::ConvShape> cases = {
      {images, 3, 7, 6, 4, 3, 1, 0},   {images, 3, 7, 6, 4, 3, 2, 1},
      {images, 2, 5, 5, 3, 5, 1, 2},   {images, 4, 4, 3, 2, 1, 1, 0},
      {images, 1, 2, 2, 2, 3, 1, 1},   {images, 2, 8, 7, 3, 2, 3, 0},
      {images, 1, 28, 28, 6, 5, 1, 2}, {images, 6, 14, 14, 16, 5, 1, 0},
      {images, 2, 9, 11, 21, 3, 1, 1}, {images, 2, 6, 30, 7, 3, 1, 1},
      {images, 3, 10, 9, 37, 3, 2, 1}, {images, 1, 9, 8, 1, 3, 1, 1},
      {images, 1, 9, 8, 1, 3, 2, 1},   {images, 1, 7, 11, 1, 5, 2, 2},
      {images, 1, 6, 5, 1, 3, 3, 0},   {images, 1, 3, 4, 1, 4, 1, 2},
      {images, 24, 7, 7, 40, 1, 1, 0}, {images, 40, 5, 6, 13, 1, 1, 0},
  };
  Rng rng(11, 0);
  for (int i = 0; i < 30; ++i) {
    int64_t k = 1 + rng.below(4), pad = rng.below(static_cast<uint32_t>(k));
    int64_t h = k + rng.below(9), w = k + rng.below(20);
    int64_t stride = i % 2 ? 1 : 1 + rng.below(3);
    cases.push_back(
        {images, 1 + rng.below(4), h, w, 1 + rng.below(i % 3 ? 5 : 24), k, stride, pad});
  }
  return cases;
}

// Scratch of the declared size followed by a guard band that catches a kernel using more.
struct Work {
  static constexpr float kGuard = 12345.0f;
  explicit Work(int64_t floats) : size(floats), buffer(floats + 64, kGuard) {}
  ~Work() {
    for (size_t i = size; i < buffer.size(); ++i)
      EXPECT_EQ(buffer[i], kGuard) << "scratch overrun past " << size << " floats";
  }
  float* data() { return buffer.data(); }
  size_t size;
  std::vector<float> buffer;
};

TEST(KernelConv2d, GeometryMatchesReference) {
  for (const auto& s : conv_cases(1)) {
    SCOPED_TRACE(describe(s));
    auto g = geometry(s);
    EXPECT_EQ(g.out_h, s.out_h());
    EXPECT_EQ(g.out_w, s.out_w());
    EXPECT_EQ(g.col_floats(), s.c * s.k * s.k * s.out_h() * s.out_w());
  }
}

// Pointwise convolutions on planes of 16 pixels or fewer, which the oneDNN sets compute as
// products of several images (conv2d_forward_batch): 1x1, 2x2, 4x3 planes; batches of one
// product, several and a partial last one.
std::vector<ref::ConvShape> pointwise_small_plane_cases() {
  return {{300, 5, 1, 1, 3, 1, 1, 0}, {45, 20, 2, 2, 30, 1, 1, 0}, {23, 7, 4, 3, 9, 1, 1, 0}};
}

// conv_cases and the pointwise small planes, with and without a bias.
std::vector<ref::ConvShape> forward_cases() {
  std::vector<ref::ConvShape> cases = conv_cases(3), pointwise = pointwise_small_plane_cases();
  cases.insert(cases.end(), pointwise.begin(), pointwise.end());
  return cases;
}

TEST(KernelConv2d, ForwardMatchesDirectConvolution) {
  test::for_each_kernel_isa([] {
    for (const auto& s : forward_cases())
      for (bool bias : {true, false}) {
        SCOPED_TRACE(describe(s) + (bias ? " bias" : " no bias"));
        auto g = geometry(s);
        Tensor x = random_uniform(Shape{s.x_numel()}, 1, 0);
        Tensor w = random_uniform(Shape{s.w_numel()}, 1, 1);
        Tensor b = random_uniform(Shape{s.out_c}, 1, 2);
        Tensor y = random_uniform(Shape{s.y_numel()}, 1, 3);  // overwritten
        Work work(kernels::conv2d_forward_work(g));
        kernels::conv2d_forward(g, s.n, x.data(), w.data(), bias ? b.data() : nullptr, y.data(),
                                work.data());
        ref::Vec want =
            ref::conv2d(s, ref::to_vec(x), ref::to_vec(w), bias ? ref::to_vec(b) : ref::Vec{});
        EXPECT_TRUE(all_close("y", y.data(), want, 1e-5));
      }
  });
}

// Threads take blocks of images, of whole products where the kernel computes several images as
// one (else of any size): one call for all images equals one call per block.
TEST(KernelConv2d, ForwardDoesNotDependOnTheImageBlocks) {
  test::for_each_kernel_isa([] {
    for (const auto& s : forward_cases()) {
      SCOPED_TRACE(describe(s));
      auto g = geometry(s);
      Tensor x = random_uniform(Shape{s.x_numel()}, 2, 0);
      Tensor w = random_uniform(Shape{s.w_numel()}, 2, 1);
      Tensor b = random_uniform(Shape{s.out_c}, 2, 2);
      Tensor whole = Tensor::zeros(Shape{s.y_numel()}), blocks = whole.clone();
      Work work(kernels::conv2d_forward_work(g));
      kernels::conv2d_forward(g, s.n, x.data(), w.data(), b.data(), whole.data(), work.data());
      const int64_t block = std::max<int64_t>(1, kernels::conv2d_forward_batch(g));
      for (int64_t n = 0; n < s.n; n += block)
        kernels::conv2d_forward(g, std::min(block, s.n - n), x.data() + n * g.in_numel(), w.data(),
                                b.data(), blocks.data() + n * g.out_numel(), work.data());
      EXPECT_TRUE(test::bitwise_equal(blocks, whole));
    }
  });
}

// The AVX-512 f32 kernels of the "+vnni" sets are the AVX2 source at 16 lanes: every output is
// the same chain of fused multiply-adds in reduction order, so both give the same bits, for the
// convolution forward (and with it backward data at stride 1) and the GEMM (the pooling only
// selects); the weight gradient, whose lane sums depend on the lanes, runs the AVX2 build in
// both. So a CPU without AVX-512 runs, in the AVX2 set, the arithmetic that the AVX-512 one runs.
TEST(KernelConv2d, Avx512GivesTheAvx2Bits) {
  using kernels::KernelIsa;
  test::report_kernel_isas();
  if (!kernels::kernel_isa_supported(KernelIsa::kAvx2FmaVnni))
    GTEST_SKIP() << "avx2+fma+vnni needs " << kernels::kernel_isa_missing(KernelIsa::kAvx2FmaVnni);
  const KernelIsa before = kernels::active_kernel_isa();
  const auto run = [](KernelIsa isa, const auto& f) {
    kernels::set_active_kernel_isa(isa);
    return f();
  };
  for (const auto& s : conv_cases(3)) {
    SCOPED_TRACE(describe(s));
    const auto g = geometry(s);
    Tensor x = random_uniform(Shape{s.x_numel()}, 4, 0),
           w = random_uniform(Shape{s.w_numel()}, 4, 1);
    Tensor b = random_uniform(Shape{s.out_c}, 4, 2);
    const auto forward = [&] {
      Tensor y = Tensor::zeros(Shape{s.y_numel()});
      Work work(kernels::conv2d_forward_work(g));
      kernels::conv2d_forward(g, s.n, x.data(), w.data(), b.data(), y.data(), work.data());
      return y;
    };
    EXPECT_TRUE(test::bitwise_equal(run(KernelIsa::kAvx2Fma, forward),
                                    run(KernelIsa::kAvx2FmaVnni, forward)));
    Tensor dy = random_uniform(Shape{s.y_numel()}, 4, 3);
    const auto weight_grad = [&] {
      Tensor dw = random_uniform(Shape{s.w_numel()}, 4, 4), db = Tensor::zeros(Shape{s.out_c});
      Work work(kernels::conv2d_backward_weight_work(g));
      kernels::conv2d_backward_weight(g, 0, s.out_c, s.n, x.data(), dy.data(), dw.data(), db.data(),
                                      work.data());
      return dw;
    };
    EXPECT_TRUE(test::bitwise_equal(run(KernelIsa::kAvx2Fma, weight_grad),
                                    run(KernelIsa::kAvx2FmaVnni, weight_grad)));
  }
  Rng rng(5, 0);
  for (int i = 0; i < 40; ++i) {
    const int64_t m = 1 + rng.below(40), n = 1 + rng.below(80), k = 1 + rng.below(600);
    const bool ta = i % 2, tb = i / 2 % 2;
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
    Tensor a = random_uniform(Shape{m * k}, 6, i), bm = random_uniform(Shape{k * n}, 7, i);
    Tensor c0 = random_uniform(Shape{m * n}, 8, i);
    const auto gemm = [&] {
      Tensor c = c0.clone();
      kernels::gemm_f32(ta, tb, m, n, k, 1.5f, a.data(), ta ? m : k, bm.data(), tb ? k : n,
                        i % 3 ? 0.5f : 0.0f, c.data(), n);
      return c;
    };
    EXPECT_TRUE(
        test::bitwise_equal(run(KernelIsa::kAvx2Fma, gemm), run(KernelIsa::kAvx2FmaVnni, gemm)));
  }
  kernels::set_active_kernel_isa(before);
}

TEST(KernelConv2d, BackwardDataMatchesReference) {
  test::for_each_kernel_isa([] {
    for (const auto& s : conv_cases(2)) {
      SCOPED_TRACE(describe(s));
      auto g = geometry(s);
      Tensor dy = random_uniform(Shape{s.y_numel()}, 3, 0);
      Tensor w = random_uniform(Shape{s.w_numel()}, 3, 1);
      Tensor dx = random_uniform(Shape{s.x_numel()}, 3, 2);  // overwritten
      Work work(kernels::conv2d_backward_data_work(g));
      kernels::conv2d_backward_data(g, s.n, dy.data(), w.data(), dx.data(), work.data());
      EXPECT_TRUE(all_close("dx", dx.data(),
                            ref::conv2d_backward_data(s, ref::to_vec(dy), ref::to_vec(w)), 1e-5));
    }
  });
}

// Over three images, and over 37 (the stride-1 kernel lays images out in blocks of up to 16):
// dw and db accumulate onto their initial values.
TEST(KernelConv2d, BackwardWeightAccumulatesOverImages) {
  std::vector<ref::ConvShape> cases = conv_cases(3), many = conv_cases(37);
  cases.insert(cases.end(), many.begin(), many.end());
  test::for_each_kernel_isa([&] {
    for (const auto& s : cases) {
      SCOPED_TRACE(describe(s));
      auto g = geometry(s);
      Tensor x = random_uniform(Shape{s.x_numel()}, 4, 0);
      Tensor dy = random_uniform(Shape{s.y_numel()}, 4, 1);
      Tensor dw = random_uniform(Shape{s.w_numel()}, 4, 2);
      Tensor db = random_uniform(Shape{s.out_c}, 4, 3);
      ref::Vec want_dw = ref::conv2d_backward_weight(s, ref::to_vec(x), ref::to_vec(dy));
      ref::Vec want_db = ref::to_vec(db);
      for (int64_t i = 0; i < s.y_numel(); ++i) want_db[(i / g.out_plane()) % s.out_c] += dy[i];
      for (int64_t i = 0; i < s.w_numel(); ++i) want_dw[i] += dw[i];
      Work work(kernels::conv2d_backward_weight_work(g));
      kernels::conv2d_backward_weight(g, 0, s.out_c, s.n, x.data(), dy.data(), dw.data(), db.data(),
                                      work.data());
      // LeNet's first convolution sums 3 x 784 products per weight, in a different order.
      EXPECT_TRUE(all_close("dw", dw.data(), want_dw, 1e-4));
      EXPECT_TRUE(all_close("db", db.data(), want_db, 1e-4));
    }
  });
}

// Small planes sum the weight gradient by position class (q mod lanes) over the images, larger
// ones sweep each image's plane: the same lane sums, bit for bit. A 1x1 convolution over n
// images of 2x4 (8 positions, a multiple of every set's lanes) has the lane sums of one image
// of 2n x 4 holding the n planes one after the other; 130 images take two blocks of panels,
// 37 input channels three panels of taps, the last one of 5.
TEST(KernelConv2d, BackwardWeightOfSmallPlanesGivesThePlaneSweepsBits) {
  test::for_each_kernel_isa([] {
    for (int64_t images : {3, 130})
      for (int64_t in_c : {5, 37}) {
        const ref::ConvShape small{images, in_c, 2, 4, 7, 1, 1, 0},
            tall{1, in_c, 2 * images, 4, 7, 1, 1, 0};
        SCOPED_TRACE(std::to_string(images) + " images, " + std::to_string(in_c) + " channels");
        Tensor x = random_uniform(Shape{small.x_numel()}, 9, 0);
        Tensor dy = random_uniform(Shape{small.y_numel()}, 9, 1);
        // The tall image's channel c is the images' planes of channel c, in order.
        const auto stack = [&](const Tensor& t, int64_t channels) {
          Tensor out = Tensor::zeros(t.shape());
          for (int64_t n = 0; n < images; ++n)
            for (int64_t c = 0; c < channels; ++c)
              for (int64_t q = 0; q < 8; ++q)
                out[(c * images + n) * 8 + q] = t[(n * channels + c) * 8 + q];
          return out;
        };
        const Tensor x_tall = stack(x, small.c), dy_tall = stack(dy, small.out_c);
        const auto weight_grad = [](const ref::ConvShape& s, const Tensor& x, const Tensor& dy) {
          Tensor dw = random_uniform(Shape{s.w_numel()}, 9, 2), db = Tensor::zeros(Shape{s.out_c});
          const auto g = geometry(s);
          Work work(kernels::conv2d_backward_weight_work(g));
          kernels::conv2d_backward_weight(g, 0, s.out_c, s.n, x.data(), dy.data(), dw.data(),
                                          db.data(), work.data());
          return dw;
        };
        EXPECT_TRUE(
            test::bitwise_equal(weight_grad(small, x, dy), weight_grad(tall, x_tall, dy_tall)));
      }
  });
}

// Threads take ranges of output channels: the ranges give the whole result bit for bit.
TEST(KernelConv2d, BackwardWeightDoesNotDependOnTheChannelRanges) {
  test::for_each_kernel_isa([] {
    for (const auto& s : conv_cases(2)) {
      if (s.out_c < 2) continue;
      SCOPED_TRACE(describe(s));
      auto g = geometry(s);
      Tensor x = random_uniform(Shape{s.x_numel()}, 5, 0);
      Tensor dy = random_uniform(Shape{s.y_numel()}, 5, 1);
      Tensor dw = random_uniform(Shape{s.w_numel()}, 5, 2),
             db = random_uniform(Shape{s.out_c}, 5, 3);
      Tensor dw_parts = dw.clone(), db_parts = db.clone();
      Work work(kernels::conv2d_backward_weight_work(g));
      kernels::conv2d_backward_weight(g, 0, s.out_c, s.n, x.data(), dy.data(), dw.data(), db.data(),
                                      work.data());
      const int64_t split = s.out_c / 2;
      for (auto [o0, o1] : {std::pair{int64_t{0}, split}, {split, s.out_c}})
        kernels::conv2d_backward_weight(g, o0, o1, s.n, x.data(), dy.data(), dw_parts.data(),
                                        db_parts.data(), work.data());
      EXPECT_TRUE(test::bitwise_equal(dw_parts, dw));
      EXPECT_TRUE(test::bitwise_equal(db_parts, db));
    }
  });
}

// The depthwise 3x3 kernels (stride 1 and 2, a phase layout of the plane) on every width from 1
// to 17 the padding allows, square and flat planes: forward with bias, dx, and dw accumulated over
// two images onto its initial values.
TEST(KernelConv2d, Depthwise3x3MatchesReference) {
  test::for_each_kernel_isa([] {
    for (int64_t stride : {1, 2})
      for (int64_t pad : {0, 1})
        for (int64_t w = 1; w <= 17; ++w)
          for (int64_t h : {w, int64_t{3}, int64_t{8}}) {
            if (w + 2 * pad < 3 || h + 2 * pad < 3) continue;
            const ref::ConvShape s{2, 1, h, w, 1, 3, stride, pad};
            SCOPED_TRACE(describe(s));
            auto g = geometry(s);
            const uint64_t seed = 60 + static_cast<uint64_t>(w);
            Tensor x = random_uniform(Shape{s.x_numel()}, seed, 0);
            Tensor wt = random_uniform(Shape{s.w_numel()}, seed, 1);
            Tensor b = random_uniform(Shape{1}, seed, 2);
            Tensor dy = random_uniform(Shape{s.y_numel()}, seed, 3);
            Tensor y = random_uniform(Shape{s.y_numel()}, seed, 4);   // overwritten
            Tensor dx = random_uniform(Shape{s.x_numel()}, seed, 5);  // overwritten
            Tensor dw = random_uniform(Shape{s.w_numel()}, seed, 6);
            ref::Vec want_dw = ref::conv2d_backward_weight(s, ref::to_vec(x), ref::to_vec(dy));
            for (int64_t i = 0; i < s.w_numel(); ++i) want_dw[i] += dw[i];
            Work work(
                std::max({kernels::conv2d_forward_work(g), kernels::conv2d_backward_data_work(g),
                          kernels::conv2d_backward_weight_work(g)}));
            kernels::conv2d_forward(g, s.n, x.data(), wt.data(), b.data(), y.data(), work.data());
            kernels::conv2d_backward_data(g, s.n, dy.data(), wt.data(), dx.data(), work.data());
            kernels::conv2d_backward_weight(g, 0, 1, s.n, x.data(), dy.data(), dw.data(), nullptr,
                                            work.data());
            EXPECT_TRUE(all_close("y", y.data(),
                                  ref::conv2d(s, ref::to_vec(x), ref::to_vec(wt), ref::to_vec(b)),
                                  1e-5));
            EXPECT_TRUE(all_close("dx", dx.data(),
                                  ref::conv2d_backward_data(s, ref::to_vec(dy), ref::to_vec(wt)),
                                  1e-5));
            EXPECT_TRUE(all_close("dw", dw.data(), want_dw, 1e-5));
          }
  });
}

// Small depthwise planes run several channels of an image in one call (interleaved): each
// channel's output and gradients are the call per channel's, bit for bit, for every run
// length up to the group, strides 1 and 2, widths 1 to 9, with and without bias; a larger plane
// runs a call per channel.
TEST(KernelConv2d, Depthwise3x3GroupsGiveEachChannelsBits) {
  test::for_each_kernel_isa([] {
    for (int64_t stride : {1, 2})
      for (int64_t w = 1; w <= 9; ++w)
        for (int64_t h : {w, int64_t{2}, int64_t{11}}) {
          const ref::ConvShape s{1, 1, h, w, 1, 3, stride, 1};
          SCOPED_TRACE(describe(s));
          const auto g = geometry(s);
          const int64_t groups = kernels::conv2d_groups_per_call(g);
          EXPECT_EQ(groups > 1, g.out_plane() <= 64);
          const uint64_t seed = 70 + static_cast<uint64_t>(w + h);
          Tensor x = random_uniform(Shape{groups * s.x_numel()}, seed, 0);
          Tensor wt = random_uniform(Shape{groups * 9}, seed, 1);
          Tensor b = random_uniform(Shape{groups}, seed, 2);
          Work work(kernels::conv2d_forward_work(g));
          for (int64_t run = 1; run <= groups; ++run)
            for (const float* bias : std::vector<const float*>{b.data(), nullptr}) {
              Tensor y = random_uniform(Shape{run * g.out_numel()}, seed, 3), want = y.clone();
              kernels::conv2d_forward_grouped(g, run, x.data(), wt.data(), bias, y.data(),
                                              work.data());
              for (int64_t c = 0; c < run; ++c)
                kernels::conv2d_forward(g, 1, x.data() + c * g.in_numel(), wt.data() + 9 * c,
                                        bias ? bias + c : nullptr, want.data() + c * g.out_numel(),
                                        work.data());
              ASSERT_TRUE(test::bitwise_equal(y, want)) << run << (bias ? " with bias" : "");
            }
          Tensor dy = random_uniform(Shape{groups * g.out_numel()}, seed, 4);
          Work back_work(kernels::conv2d_backward_data_work(g));
          for (int64_t run = 1; run <= groups; ++run) {
            Tensor dx = random_uniform(Shape{run * g.in_numel()}, seed, 5), want = dx.clone();
            kernels::conv2d_backward_data_grouped(g, run, dy.data(), wt.data(), dx.data(),
                                                  back_work.data());
            for (int64_t c = 0; c < run; ++c)
              kernels::conv2d_backward_data(g, 1, dy.data() + c * g.out_numel(), wt.data() + 9 * c,
                                            want.data() + c * g.in_numel(), back_work.data());
            ASSERT_TRUE(test::bitwise_equal(dx, want)) << "dx, " << run;
            Tensor dw = random_uniform(Shape{run * 9}, seed, 6), want_dw = dw.clone();
            Tensor db = random_uniform(Shape{run}, seed, 7), want_db = db.clone();
            Work grad_work(kernels::conv2d_backward_weight_work(g));
            kernels::conv2d_backward_weight_grouped(g, run, x.data(), dy.data(), dw.data(),
                                                    db.data(), grad_work.data());
            for (int64_t c = 0; c < run; ++c)
              kernels::conv2d_backward_weight(g, 0, 1, 1, x.data() + c * g.in_numel(),
                                              dy.data() + c * g.out_numel(), want_dw.data() + 9 * c,
                                              want_db.data() + c, grad_work.data());
            ASSERT_TRUE(test::bitwise_equal(dw, want_dw)) << "dw, " << run;
            ASSERT_TRUE(test::bitwise_equal(db, want_db)) << "db, " << run;
          }
        }
  });
}

// <im2col(x), c> == <x, col2im(c)>: col2im is the exact adjoint, padding included.
TEST(KernelConv2d, Col2imIsAdjointOfIm2col) {
  for (const auto& s : conv_cases(1)) {
    SCOPED_TRACE(describe(s));
    auto g = geometry(s);
    Tensor x = random_uniform(Shape{s.x_numel()}, 6, 0);
    Tensor c = random_uniform(Shape{g.col_floats()}, 6, 1);
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
