#include "nn/loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nn/gradient_check.h"
#include "zotrain/core/error.h"

namespace zotrain {
namespace {

TEST(LossSoftmaxCrossEntropy, ValueAndGradientMatchReference) {
  const int64_t rows = 5, classes = 7;
  Tensor logits = test::random_uniform(Shape{rows, classes}, 80, 0, -3.0f, 3.0f);
  const std::vector<uint8_t> labels = {0, 6, 3, 3, 1};
  Tensor grad = test::nan_tensor(logits.shape());
  float loss = softmax_cross_entropy(logits, labels.data(), &grad, nullptr);

  auto reference = [&](const ref::Vec& z) {
    return ref::softmax_cross_entropy(rows, classes, z, labels.data());
  };
  const ref::Vec z = ref::to_vec(logits);
  EXPECT_NEAR(loss, reference(z), 1e-6 * reference(z));
  // The loss is smooth: a step of 1e-5 keeps the central-difference error near 1e-10.
  EXPECT_TRUE(
      test::all_close("dlogits", grad.data(), test::central_differences(reference, z, 1e-5), 1e-6));
}

TEST(LossSoftmaxCrossEntropy, StableForHugeLogits) {
  Tensor logits = Tensor::zeros(Shape{3, 3});
  const float rows[3][3] = {{1e4f, -1e4f, 0.0f}, {1e4f, -1e4f, 0.0f}, {-1e4f, -1e4f, -1e4f}};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) logits[r * 3 + c] = rows[r][c];
  const std::vector<uint8_t> labels = {0, 1, 2};
  Tensor grad = Tensor::zeros(logits.shape());
  float loss = softmax_cross_entropy(logits, labels.data(), &grad, nullptr);
  // Row losses: 0 (confidently right), 2e4 (confidently wrong), log 3 (uniform).
  EXPECT_FLOAT_EQ(loss, static_cast<float>((2e4 + std::log(3.0)) / 3));
  const float third = 1.0f / 3, ninth = 1.0f / 9;
  const std::vector<float> want = {0, 0, 0, third, -third, 0, ninth, ninth, -2 * ninth};
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(grad[i], want[i], 1e-7) << i;
}

TEST(LossSoftmaxCrossEntropy, AddsCorrectPredictions) {
  Tensor logits = Tensor::zeros(Shape{4, 3});
  const float values[12] = {3, 1, 2, /**/ 0, 5, 5, /**/ 1, 1, 1, /**/ -1, -2, 0};
  for (int i = 0; i < 12; ++i) logits[i] = values[i];
  // Ties count for the first maximum: row 1 predicts class 1, row 2 class 0.
  const std::vector<uint8_t> labels = {0, 2, 0, 1};
  int64_t correct = 10;
  softmax_cross_entropy(logits, labels.data(), nullptr, &correct);
  EXPECT_EQ(correct, 12);
  Tensor empty;
  softmax_cross_entropy(logits, labels.data(), &empty, &correct);
  EXPECT_EQ(correct, 14);
}

TEST(LossSoftmaxCrossEntropy, RejectsLabelOutOfRange) {
  Tensor logits = Tensor::zeros(Shape{2, 3});
  const std::vector<uint8_t> labels = {1, 3};
  EXPECT_THROW(softmax_cross_entropy(logits, labels.data(), nullptr, nullptr), InputError);
}

}  // namespace
}  // namespace zotrain
