#include "nn/linear.h"

#include <gtest/gtest.h>

#include "kernels/kernel_isas.h"
#include "nn/gradient_check.h"

namespace zotrain {
namespace {

test::RefForward linear_reference(int64_t n, int64_t in, int64_t out) {
  return [=](const ref::Vec& x, const std::vector<ref::Vec>& p) {
    return ref::linear(n, in, out, x, p[0], p[1]);
  };
}

TEST(GradCheck, Linear) {
  Linear layer(7, 5);
  test::check_gradients(layer, test::random_uniform(Shape{3, 7}, 20, 0), linear_reference(3, 7, 5),
                        20);
}

// A rank-4 input is read as [N, C*H*W].
TEST(GradCheck, LinearOnRank4Input) {
  Linear layer(12, 4);
  test::check_gradients(layer, test::random_uniform(Shape{2, 2, 3, 2}, 21, 0),
                        linear_reference(2, 12, 4), 21);
}

// Also with more inputs than one reduction block of the GEMM (256).
TEST(LayerLinear, SameResultForAnyThreadCount) {
  test::for_each_kernel_isa([] {
    Linear layer(37, 19);
    test::expect_same_for_any_thread_count(layer, Shape{13, 37}, 22);
    Linear wide(300, 21);
    test::expect_same_for_any_thread_count(wide, Shape{13, 300}, 24);
  });
}

TEST(LayerLinear, ForwardUsesContextParams) {
  Linear layer(6, 4);
  test::expect_forward_uses_context_params(layer, Shape{3, 6}, 23);
}

}  // namespace
}  // namespace zotrain
