// A generated stand-in for ModelNet40, which these machines do not have: point clouds sampled from
// the surfaces of procedural shapes of 10 classes, each cloud with its own random proportions and
// noise, written in ModelNet40's HDF5 layout (point_h5.h) so that the same loader and experiments
// run on it. It is NOT ModelNet40 and its accuracies are not comparable with the paper's; see
// docs/data.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zotrain/core/rng.h"

namespace zotrain {

struct StandinOptions {
  int64_t train_per_class = 300, test_per_class = 75;
  int64_t points = 2048;           // per cloud, as in modelnet40_ply_hdf5_2048
  int64_t clouds_per_file = 2048;  // the original's files hold up to 2048 clouds each
  uint64_t seed = 0;               // the whole set is a function of the options
};

// The class names, in label order: sphere, box, cylinder, cone, torus, plane, pyramid, bowl,
// helix, table.
const std::vector<std::string>& standin_class_names();

// Fills `out` ([points, 3], y up) with one cloud of class `cls`: points on the shape's surface,
// stretched per axis by a random aspect in [0.7, 1.3], scaled into the unit sphere, then jittered
// by Gaussian noise of a random sigma in [0.005, 0.02], all drawn from `rng`.
void sample_standin_cloud(int cls, Rng& rng, float* out, int64_t points);

// Writes the stand-in into `dir` (created if missing): ply_data_train<i>.h5 and
// ply_data_test<i>.h5 with the classes interleaved in a seeded order, train_files.txt,
// test_files.txt and shape_names.txt. Cloud j of the training (test) set is drawn from its own Rng
// stream, so the files do not depend on clouds_per_file. Throws InputError for non-positive
// counts, RuntimeError if a file cannot be written.
void write_modelnet40_standin(const std::string& dir, const StandinOptions& options);

}  // namespace zotrain
