// A point-cloud classification data set (ModelNet40 and its stand-in): every example is a cloud of
// the same number of (x, y, z) points, held as float since the files store them so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zotrain {

struct PointCloudSet {
  std::string name;              // "modelnet40", "modelnet40-standin" or the folder path
  int64_t points_per_cloud = 0;  // P, 2048 in ModelNet40's HDF5 files
  std::vector<float> points;     // size() * P * 3, cloud after cloud, each [P, 3] (x, y, z)
  std::vector<uint8_t> labels;   // size(), each < num_classes
  int num_classes = 0;

  int64_t size() const { return static_cast<int64_t>(labels.size()); }
  int64_t cloud_numel() const { return points_per_cloud * 3; }
  const float* cloud(int64_t i) const { return points.data() + i * cloud_numel(); }
  float* cloud(int64_t i) { return points.data() + i * cloud_numel(); }
  // The clouds at `indices`, in that order, with the same name, point count and classes.
  PointCloudSet subset(const std::vector<int64_t>& indices) const;
};

}  // namespace zotrain
