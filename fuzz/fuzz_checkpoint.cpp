// A checkpoint (a tensor file with its metadata and stored config), as --init, --resume and
// `zotrain eval` read it.
#include "fuzz_file.h"
#include "zotrain/train/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return zotrain::fuzz::on_file(data, size, ".bin",
                                [](const std::string& p) { zotrain::read_checkpoint(p); });
}
