#include "kernels/activation.h"

#include <gtest/gtest.h>

#include <vector>

namespace zotrain {
namespace {

// In place, as a Network may run it; the gradient at exactly 0 is 0 (backward tests y > 0).
TEST(KernelReLU, ForwardAndBackwardInPlace) {
  std::vector<float> v = {-2.0f, -0.0f, 0.0f, 0.5f, 3.0f};
  kernels::relu_forward(5, v.data(), v.data());
  EXPECT_EQ(v, (std::vector<float>{0.0f, 0.0f, 0.0f, 0.5f, 3.0f}));
  std::vector<float> g = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f};
  kernels::relu_backward(5, v.data(), g.data(), g.data());
  EXPECT_EQ(g, (std::vector<float>{0.0f, 0.0f, 0.0f, 4.0f, 5.0f}));
}

}  // namespace
}  // namespace zotrain
