// ModelNet40's HDF5 layout, as its classification benchmark is distributed
// (modelnet40_ply_hdf5_2048): each file holds a dataset `data` [N, P, 3] of floats (P = 2048) and
// a dataset `label` [N, 1] (or [N]) of integer classes; other datasets (normal, faceId) are
// ignored. Read and written through the HDF5 C library.
#pragma once

#include <string>

#include "zotrain/data/point_cloud.h"

namespace zotrain {

// Whether this build reads and writes HDF5 files (ZOTRAIN_WITH_HDF5; without it both functions
// throw InputError saying so).
bool hdf5_supported();
// Reads one file into a set named `path` with num_classes 0 (the caller knows the classes).
// Throws InputError naming the file and the dataset at fault: a missing or non-HDF5 file, no
// `data` or `label`, `data` not a float array [N, P, 3] or `label` not an integer array [N, 1] or
// [N] of the same N, a label outside 0..255, or no clouds or points.
PointCloudSet read_point_h5(const std::string& path);

// Writes `set` in that layout: `data` float32 [N, P, 3] and `label` uint8 [N, 1]. Throws
// RuntimeError if the file cannot be written.
void write_point_h5(const std::string& path, const PointCloudSet& set);

}  // namespace zotrain
