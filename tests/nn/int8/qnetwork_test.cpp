#include "zotrain/nn/int8/qnetwork.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "zotrain/core/rng.h"
#include "zotrain/models/model.h"

namespace zotrain {
namespace {

// Forward-only passes fuse LeNet-5's max poolings into its convolutions (past the ReLUs): the
// int8 logits and their exponent equal those of passes that keep every activation, with 1 and 2
// threads, a partial batch and body weights read from the transform's copy; the arena equals the
// plan, and no forward buffer holds an unpooled convolution output.
TEST(QNetwork, MaxPoolingFusedIntoConvolutionsGivesTheSameLogits) {
  const ModelSpec m = lenet5(Shape{1, 28, 28}, 10);
  const Network desc(m.item_shape, m.layers);
  const auto copy_values = [](const QWeight& w, int8_t* dst, int64_t b, int64_t e) {
    std::copy(w.value.data + b, w.value.data + e, dst + b);
  };
  const QWeightTransform copy = copy_values;
  std::vector<int8_t> want;
  int want_exp = 0;
  for (int threads : {1, 2})
    for (int head : {0, 3, desc.num_layers()}) {
      SCOPED_TRACE(::testing::Message() << threads << " threads, head " << head);
      QNetwork net(desc);
      ThreadPool pool(threads);
      Arena arena;
      net.allocate(arena, 12, head, 5, &pool);
      EXPECT_EQ(arena.total_bytes(), net.plan(12, head, threads).total());
      Rng rng(8, 0);
      QTensor& x = net.input();
      for (int64_t i = 0; i < x.numel(); ++i)
        x.data[i] = static_cast<int8_t>(static_cast<int>(rng.below(255)) - 127);
      x.exp = -7;
      const QTensor y = net.forward(11, &copy);
      const std::vector<int8_t> logits(y.data, y.data + y.numel());
      if (want.empty()) want = logits, want_exp = y.exp;
      EXPECT_EQ(logits, want);
      EXPECT_EQ(y.exp, want_exp);
    }
  QNetwork net(desc);
  const size_t block = net.plan(12, desc.num_layers()).bytes(Bucket::kForward);
  EXPECT_GE(block, align_up(static_cast<size_t>(desc.input_shape(3, 12).numel())));
  EXPECT_LT(block, align_up(static_cast<size_t>(desc.input_shape(1, 12).numel())))
      << "the first pooling's output is planned, not the first convolution's";
}

}  // namespace
}  // namespace zotrain
