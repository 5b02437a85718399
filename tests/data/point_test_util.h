// Helpers for the point-cloud tests: small generated clouds and folders of their files.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/point_h5.h"
#include "zotrain/data/point_cloud.h"

namespace zotrain::test {

// n clouds of p points, labels (first + i) % classes; the first coordinate of cloud i is first + i,
// so tests can tell clouds apart after shuffling; the others are a pattern of i.
inline PointCloudSet make_clouds(int64_t n, int64_t p, int classes, int64_t first = 0) {
  PointCloudSet s;
  s.points_per_cloud = p;
  s.points.resize(size_t(n * p * 3));
  for (int64_t i = 0; i < n; ++i) {
    float* c = s.points.data() + i * p * 3;
    for (int64_t k = 0; k < p * 3; ++k) c[k] = float((first + i) * 0.5 + k * 0.25);
    c[0] = float(first + i);
    s.labels.push_back(uint8_t((first + i) % classes));
  }
  return s;
}
inline int64_t cloud_id(const float* cloud) {
  return int64_t(cloud[0]);
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// A point-cloud folder: train files of n_train[i] clouds, test files of n_test[i], p points each,
// listed as the original lists do (with a data/modelnet40_ply_hdf5_2048/ prefix), and a
// shape_names.txt of `classes` lines. Cloud ids run on across the files of a list.
inline void write_point_folder(const std::filesystem::path& dir,
                               const std::vector<int64_t>& n_train,
                               const std::vector<int64_t>& n_test, int64_t p, int classes) {
  std::filesystem::create_directories(dir);
  for (const auto& [list, counts] :
       {std::pair{std::string("train"), n_train}, std::pair{std::string("test"), n_test}}) {
    std::string lines;
    int64_t first = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      const std::string file = "ply_data_" + list + std::to_string(i) + ".h5";
      write_point_h5((dir / file).string(), make_clouds(counts[i], p, classes, first));
      first += counts[i];
      lines += "data/modelnet40_ply_hdf5_2048/" + file + "\n";
    }
    write_text(dir / (list + "_files.txt"), lines);
  }
  std::string names;
  for (int c = 0; c < classes; ++c) names += "shape" + std::to_string(c) + "\n";
  write_text(dir / "shape_names.txt", names);
}

}  // namespace zotrain::test
