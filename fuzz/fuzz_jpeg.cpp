// A JPEG image of an image folder.
#include "data/jpeg.h"
#include "fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return zotrain::fuzz::on_file(data, size, ".jpg",
                                [](const std::string& p) { zotrain::detail::read_jpeg(p); });
}
