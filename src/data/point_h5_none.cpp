// point_h5.h in a build without the HDF5 library (ZOTRAIN_WITH_HDF5 off, or libhdf5-dev
// missing): point-cloud files are refused with a message; everything else works.
#include "data/point_h5.h"
#include "zotrain/core/error.h"

namespace zotrain {

namespace {

[[noreturn]] void refuse(const std::string& path) {
  throw InputError(path +
                   ": this zotrain was built without HDF5 (Debian: libhdf5-dev; CMake option "
                   "ZOTRAIN_WITH_HDF5), so it reads and writes no ModelNet40 point-cloud files");
}

}  // namespace

bool hdf5_supported() {
  return false;
}

PointCloudSet read_point_h5(const std::string& path) {
  refuse(path);
}

void write_point_h5(const std::string& path, const PointCloudSet&) {
  refuse(path);
}

}  // namespace zotrain
