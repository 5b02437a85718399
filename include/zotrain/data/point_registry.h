// Point-cloud data-set names, resolved to HDF5 files and split like the image sets (registry.h).
#pragma once

#include <string>
#include <vector>

#include "zotrain/data/point_cloud.h"
#include "zotrain/data/registry.h"

namespace zotrain {

struct PointSplits {
  PointCloudSet train, val, test;
};

// A point-cloud folder holds train_files.txt and test_files.txt, each listing .h5 files in
// ModelNet40's layout (point_h5.h) one per line. A listed file is looked for at that path inside
// the folder, then by its base name in the folder (the original lists say
// data/modelnet40_ply_hdf5_2048/ply_data_train0.h5). The files of a list are concatenated in
// order. The classes are the lines of shape_names.txt when the folder has one, else the highest
// training label + 1. Splits as load_data does; the test set is the test_files.txt files.
// Known names: "modelnet40" (the folder modelnet40_ply_hdf5_2048 as distributed) and
// "modelnet40-standin" (written by `zotrain make-data`), looked up like the image sets. Throws
// InputError for an unknown name, a missing, unlisted or corrupt file, labels beyond the classes,
// clouds of different point counts, or sizes that leave no training examples.
PointSplits load_point_data(const std::string& name_or_path, const DataOptions& options);

// "modelnet40", "modelnet40-standin".
std::vector<std::string> known_point_data_sets();
bool is_point_data_set(const std::string& name);

// The folder a point-cloud name or path resolves to (see load_point_data).
std::string resolve_point_data_dir(const std::string& name_or_path);

}  // namespace zotrain
