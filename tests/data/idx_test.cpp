#include "data/idx.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "data/data_test_util.h"
#include "test_util.h"

namespace zotrain {
namespace {

using test::idx_header;
using test::input_error;
using test::write_bytes;
using testing::HasSubstr;

class Idx : public testing::Test {
 protected:
  test::TempDir tmp_;
  const std::string path_ = tmp_.file("x-idx3-ubyte");
};

TEST_F(Idx, RoundTripsRawAndGzip) {
  const IdxArray a = test::make_images(5, 3, 4);
  for (bool gzip : {false, true}) {
    SCOPED_TRACE(gzip ? "gzip" : "raw");
    write_idx(path_, a, gzip);
    auto bytes = test::read_bytes(path_);
    ASSERT_GE(bytes.size(), 2u);
    EXPECT_EQ(bytes[0] == 0x1f && bytes[1] == 0x8b, gzip);  // the gzip magic
    IdxArray b = read_idx(path_);
    EXPECT_EQ(b.dims, (std::vector<int64_t>{5, 3, 4}));
    EXPECT_EQ(b.data, a.data);
  }
}

TEST_F(Idx, ReadsOneDimAndFourDimsAndEmpty) {
  for (const IdxArray& a : {IdxArray{{3}, {7, 8, 9}}, IdxArray{{1, 2, 1, 2}, {1, 2, 3, 4}},
                            IdxArray{{0, 28, 28}, {}}}) {
    write_idx(path_, a, false);
    IdxArray b = read_idx(path_);
    EXPECT_EQ(b.dims, a.dims);
    EXPECT_EQ(b.data, a.data);
  }
}

TEST_F(Idx, ReadsLargeDimsExactly) {
  // Dims above 2^24 and 2^31 would be mangled by a sign or width slip in the big-endian decode.
  write_bytes(path_, idx_header(0x08, {0x80000001u, 0}));
  EXPECT_EQ(read_idx(path_).dims, (std::vector<int64_t>{0x80000001ll, 0}));
}

TEST_F(Idx, MissingFile) {
  std::string msg = input_error([&] { read_idx(path_); });
  EXPECT_THAT(msg, HasSubstr(path_));
  EXPECT_THAT(msg, HasSubstr("no such file"));
}

TEST_F(Idx, DirectoryInsteadOfFile) {
  EXPECT_THAT(input_error([&] { read_idx(tmp_.path().string()); }), HasSubstr("is a directory"));
}

TEST_F(Idx, FileShorterThanHeader) {
  for (bool gzip : {false, true}) {
    write_bytes(path_, {0, 0}, gzip);
    std::string msg = input_error([&] { read_idx(path_); });
    EXPECT_THAT(msg, HasSubstr(path_));
    EXPECT_THAT(msg, HasSubstr("shorter than the 4-byte IDX header"));
  }
  write_bytes(path_, {});
  EXPECT_THAT(input_error([&] { read_idx(path_); }), HasSubstr("holds only 0 bytes"));
}

TEST_F(Idx, FileEndsInsideDims) {
  auto bytes = idx_header(0x08, {10, 28, 28});
  bytes.resize(9);
  write_bytes(path_, bytes);
  std::string msg = input_error([&] { read_idx(path_); });
  EXPECT_THAT(msg, HasSubstr(path_));
  EXPECT_THAT(msg, HasSubstr("ends inside the IDX header"));
}

TEST_F(Idx, TruncatedData) {
  for (bool gzip : {false, true}) {
    auto bytes = idx_header(0x08, {2, 3, 3});
    bytes.resize(bytes.size() + 17);  // one byte short of 18
    write_bytes(path_, bytes, gzip);
    std::string msg = input_error([&] { read_idx(path_); });
    EXPECT_THAT(msg, HasSubstr(path_));
    EXPECT_THAT(msg, HasSubstr("truncated"));
    EXPECT_THAT(msg, HasSubstr("[2, 3, 3] need 18 bytes"));
    EXPECT_THAT(msg, HasSubstr("only 17"));
  }
}

TEST_F(Idx, TrailingBytes) {
  for (bool gzip : {false, true}) {
    auto bytes = idx_header(0x08, {4});
    bytes.insert(bytes.end(), {1, 2, 3, 4, 5, 6});
    write_bytes(path_, bytes, gzip);
    std::string msg = input_error([&] { read_idx(path_); });
    EXPECT_THAT(msg, HasSubstr(path_));
    EXPECT_THAT(msg, HasSubstr("2 trailing bytes"));
  }
}

TEST_F(Idx, BadMagic) {
  auto bytes = idx_header(0x08, {1});
  bytes[1] = 0x42;
  bytes.push_back(0);
  write_bytes(path_, bytes);
  std::string msg = input_error([&] { read_idx(path_); });
  EXPECT_THAT(msg, HasSubstr(path_));
  EXPECT_THAT(msg, HasSubstr("bad magic 0x00 0x42"));
}

TEST_F(Idx, UnsupportedType) {
  auto bytes = idx_header(0x0D, {1});
  bytes.insert(bytes.end(), 4, 0);  // one float32
  write_bytes(path_, bytes);
  std::string msg = input_error([&] { read_idx(path_); });
  EXPECT_THAT(msg, HasSubstr(path_));
  EXPECT_THAT(msg, HasSubstr("unsupported IDX data type 0x0D (float32)"));
  EXPECT_THAT(msg, HasSubstr("only 0x08"));

  write_bytes(path_, idx_header(0x42, {0}));
  EXPECT_THAT(input_error([&] { read_idx(path_); }), HasSubstr("unknown IDX data type 0x42"));
}

TEST_F(Idx, BadDimsCount) {
  for (uint8_t ndims : {0, 5}) {
    write_bytes(path_,
                {0, 0, 0x08, ndims, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
    std::string msg = input_error([&] { read_idx(path_); });
    EXPECT_THAT(msg, HasSubstr(path_));
    EXPECT_THAT(msg, HasSubstr("bad number of dims " + std::to_string(ndims)));
  }
}

TEST_F(Idx, CorruptGzip) {
  // Flipped bits inside the compressed data: inflate fails or the CRC check does.
  write_idx(path_, test::make_images(50, 8, 8), true);
  auto bytes = test::read_bytes(path_);
  for (size_t i = bytes.size() / 3; i < bytes.size() / 2; ++i) bytes[i] ^= 0x5A;
  write_bytes(path_, bytes);
  std::string msg = input_error([&] { read_idx(path_); });
  EXPECT_THAT(msg, HasSubstr(path_));
  EXPECT_THAT(msg, HasSubstr("corrupt gzip stream"));
}

TEST_F(Idx, CutOffGzip) {
  // A download cut short: the deflate stream ends early.
  write_idx(path_, test::make_images(50, 8, 8), true);
  auto bytes = test::read_bytes(path_);
  bytes.resize(bytes.size() / 2);
  write_bytes(path_, bytes);
  std::string msg = input_error([&] { read_idx(path_); });
  EXPECT_THAT(msg, HasSubstr(path_));
  EXPECT_THAT(msg, HasSubstr("corrupt gzip stream"));
}

TEST_F(Idx, GzipMissingOnlyItsTrailer) {
  // All data decodes; only the CRC and length at the end are gone.
  write_idx(path_, test::make_images(5, 4, 4), true);
  auto bytes = test::read_bytes(path_);
  bytes.resize(bytes.size() - 8);
  write_bytes(path_, bytes);
  EXPECT_THAT(input_error([&] { read_idx(path_); }), HasSubstr("corrupt gzip stream"));
}

}  // namespace
}  // namespace zotrain
