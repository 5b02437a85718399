// The IDX reader (MNIST's files, raw or gzip) on any bytes.
#include "data/idx.h"
#include "fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return zotrain::fuzz::on_file(data, size, ".idx",
                                [](const std::string& p) { zotrain::read_idx(p); });
}
