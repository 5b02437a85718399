#include "zotrain/data/batcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "data/data_test_util.h"

namespace zotrain {
namespace {

using test::input_error;
using testing::HasSubstr;

// n examples of 1x2x2 whose first three pixels spell the index; label = index % 3.
Dataset toy(int64_t n) {
  Dataset ds;
  ds.name = "toy";
  ds.item_shape = Shape{1, 2, 2};
  ds.pixels = test::make_images(n, 2, 2).data;
  ds.labels = test::make_labels(n, 3).data;
  ds.num_classes = 3;
  return ds;
}

// The example ids of one epoch, batch by batch, read back from the filled buffers (identity
// normalization: x = p / 255).
std::vector<int64_t> epoch_ids(const Batcher& b) {
  std::vector<int64_t> out;
  const int64_t d = b.data().item_numel();
  std::vector<float> x(size_t(b.batch_size() * d));
  std::vector<uint8_t> labels(size_t(b.batch_size()));
  for (int64_t k = 0; k < b.batches_per_epoch(); ++k) {
    int64_t rows = b.fill(k, x.data(), labels.data());
    for (int64_t r = 0; r < rows; ++r) {
      uint8_t p[3];
      for (int j = 0; j < 3; ++j) p[j] = uint8_t(std::lround(x[r * d + j] * 255));
      out.push_back(test::example_id(p));
      EXPECT_EQ(labels[r], out.back() % 3);
    }
  }
  return out;
}

TEST(Batcher, ASharesRowsAreTheWholeBatchsRowsWithEveryLabel) {
  // A data-parallel rank's share: rows [n·p/P, n·(p+1)/P) of the batch, from x's first row.
  Dataset ds = toy(11);
  Batcher b(ds, 7, Normalization{}, true, 3);
  const int64_t d = ds.item_numel();
  for (int64_t k = 0; k < b.batches_per_epoch(); ++k) {
    std::vector<float> whole(size_t(7 * d)), part(size_t(7 * d), -1.0f);
    std::vector<uint8_t> labels(7), part_labels(7);
    const int64_t rows = b.fill(k, whole.data(), labels.data());
    for (int p = 0; p < 3; ++p) {
      const RowShare share{p, 3};
      EXPECT_EQ(b.fill(k, part.data(), part_labels.data(), share), rows);
      EXPECT_EQ(part_labels, labels);
      const int64_t begin = share.begin(rows), end = share.end(rows);
      EXPECT_TRUE(std::equal(whole.begin() + begin * d, whole.begin() + end * d, part.begin()));
    }
  }
}

TEST(Batcher, EveryExampleOncePerEpochWithSmallerLastBatch) {
  Dataset ds = toy(10);
  Batcher b(ds, 4, Normalization{}, true, 1);
  EXPECT_EQ(b.batches_per_epoch(), 3);
  EXPECT_EQ(b.rows(0), 4);
  EXPECT_EQ(b.rows(2), 2);
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    b.start_epoch(epoch);
    std::vector<int64_t> ids = epoch_ids(b);
    EXPECT_EQ(ids, b.order());
    std::sort(ids.begin(), ids.end());
    for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(ids[i], i);
  }
}

TEST(Batcher, ExactBatchesAndBatchLargerThanData) {
  Dataset ds = toy(8);
  EXPECT_EQ(Batcher(ds, 4, {}, false, 0).batches_per_epoch(), 2);
  Batcher big(ds, 100, {}, false, 0);
  EXPECT_EQ(big.batches_per_epoch(), 1);
  EXPECT_EQ(big.rows(0), 8);
  Dataset empty = toy(0);
  EXPECT_EQ(Batcher(empty, 4, {}, true, 0).batches_per_epoch(), 0);
}

TEST(Batcher, OrderIsSeededPerEpoch) {
  Dataset ds = toy(50);
  Batcher a(ds, 8, {}, true, 11), b(ds, 8, {}, true, 11), c(ds, 8, {}, true, 12);
  a.start_epoch(0);
  std::vector<int64_t> e0 = a.order();
  a.start_epoch(1);
  std::vector<int64_t> e1 = a.order();
  EXPECT_NE(e0, e1);
  // Another Batcher with the same seed, visiting epochs in another order: same orders.
  b.start_epoch(1);
  EXPECT_EQ(b.order(), e1);
  b.start_epoch(0);
  EXPECT_EQ(b.order(), e0);
  c.start_epoch(0);
  EXPECT_NE(c.order(), e0);
  EXPECT_EQ(epoch_ids(b), e0);
}

TEST(Batcher, NoShuffleKeepsFileOrder) {
  Dataset ds = toy(7);
  Batcher b(ds, 3, {}, false, 5);
  b.start_epoch(4);
  EXPECT_EQ(epoch_ids(b), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(Batcher, NormalizesEveryPixelValueExactly) {
  // One example per pixel value.
  Dataset ds;
  ds.item_shape = Shape{1, 1, 1};
  for (int p = 0; p < 256; ++p) ds.pixels.push_back(uint8_t(p)), ds.labels.push_back(0);
  ds.num_classes = 2;
  const Normalization norm{0.1307f, 0.3081f};
  Batcher b(ds, 256, norm, false, 0);
  std::vector<float> x(256);
  ASSERT_EQ(b.fill(0, x.data(), nullptr), 256);
  for (int p = 0; p < 256; ++p)
    EXPECT_EQ(x[p], float((p / 255.0 - double(norm.mean)) / double(norm.std))) << p;
  EXPECT_NEAR(x[0], -0.4242, 1e-4);
  EXPECT_NEAR(x[255], 2.8215, 1e-4);
}

TEST(Batcher, FillsChannelsInLayout) {
  Dataset ds;
  ds.item_shape = Shape{2, 1, 3};
  ds.pixels = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15};
  ds.labels = {0, 1};
  ds.num_classes = 2;
  Batcher b(ds, 2, Normalization{0, 1.0f / 255}, false, 0);  // x = p
  std::vector<float> x(12);
  std::vector<uint8_t> labels(2);
  b.fill(0, x.data(), labels.data());
  for (int i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(x[i], ds.pixels[i]);
  EXPECT_EQ(labels, ds.labels);
}

TEST(Batcher, RejectsBadArguments) {
  Dataset ds = toy(4);
  EXPECT_THAT(input_error([&] { Batcher(ds, 0, {}, true, 0); }), HasSubstr("batch size is 0"));
  EXPECT_THAT(input_error([&] {
                Batcher(ds, 2, Normalization{0, 0}, true, 0);
              }),
              HasSubstr("nonzero std"));
}

}  // namespace
}  // namespace zotrain
