#include "zotrain/core/tensor_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_util.h"
#include "zotrain/core/error.h"

namespace zotrain {
namespace {

TensorFile sample() {
  TensorFile f;
  f.meta = R"({"kind":"test"})";
  Tensor a = Tensor::zeros(Shape{2, 3});
  for (int i = 0; i < 6; ++i) a[i] = 0.5f * i - 1.0f;
  f.tensors.emplace_back("a", a);
  f.tensors.emplace_back("b", Tensor::zeros(Shape{4}));
  return f;
}

std::string error_of(const std::string& path) {
  try {
    read_tensor_file(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(TensorFile, RoundTripsMetaAndTensors) {
  test::TempDir dir;
  write_tensor_file(dir.file("x.bin"), sample());
  TensorFile f = read_tensor_file(dir.file("x.bin"));
  EXPECT_EQ(f.meta, R"({"kind":"test"})");
  const Tensor& a = f.get("a", Shape{2, 3}, "x.bin");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(a[i], 0.5f * i - 1.0f);
  EXPECT_THROW(f.get("a", Shape{3, 2}, "x.bin"), InputError);
  EXPECT_THROW(f.get("c", Shape{1}, "x.bin"), InputError);
  // Written atomically: no temp file is left behind.
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path())) (void)e, ++files;
  EXPECT_EQ(files, 1);
}

TEST(TensorFile, RejectsMissingCorruptTruncatedAndForeignFiles) {
  test::TempDir dir;
  std::string path = dir.file("x.bin");
  EXPECT_NE(error_of(dir.file("missing.bin")).find("missing.bin"), std::string::npos);
  write_tensor_file(path, sample());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto write = [&](const std::string& b) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << b;
  };
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x10;
  write(flipped);
  EXPECT_NE(error_of(path).find("checksum"), std::string::npos);
  write(bytes.substr(0, bytes.size() - 9));
  EXPECT_NE(error_of(path).find(path), std::string::npos);
  write("hello, this is not a checkpoint at all");
  EXPECT_NE(error_of(path).find("bad magic"), std::string::npos);
  write("");
  EXPECT_NE(error_of(path).find(path), std::string::npos);
}

}  // namespace
}  // namespace zotrain
