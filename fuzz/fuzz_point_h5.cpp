// A ModelNet40 HDF5 point-cloud file.
#include "data/point_h5.h"
#include "fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return zotrain::fuzz::on_file(data, size, ".h5",
                                [](const std::string& p) { zotrain::read_point_h5(p); });
}
