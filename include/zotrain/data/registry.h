// Data-set names as the CLI takes them (docs/CLI.md, --data NAME|PATH), resolved to files and split
// into training, validation and test sets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zotrain/data/dataset.h"

namespace zotrain {

struct DataOptions {
  int64_t val_size = 5000;  // training examples held out for validation
  int64_t train_limit = 0;  // keep only the first N training examples; 0 = all
  uint64_t seed = 0;        // drives the validation split
};

struct DataSplits {
  Dataset train, val, test;
};

// Loads `name_or_path` and splits it. The training files are permuted with a seeded Fisher-Yates
// shuffle; the last val_size examples of the permutation are the validation set and the others,
// in permuted order, the training set, of which train_limit then keeps the first. The test set is
// the t10k files. A rotated name ("mnist-rotated:30", docs/data.md) reads the upright set's files
// and rotates each image of both files by its angle (rotation_angle, keyed by its index in its
// file) before the split. Throws InputError for an unknown name, a bad rotation, missing or corrupt
// files, or sizes that leave no training examples.
DataSplits load_data(const std::string& name_or_path, const DataOptions& options);

// The folder holding a data set's four IDX files (train-images-idx3-ubyte,
// train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each raw or .gz).
// A known name (known_data_sets()) is looked up as <dir>/<name>/ in each of data_search_dirs(), a
// rotated one as its upright set's folder; anything else containing a '/' or naming an existing
// folder is that folder.
std::string resolve_data_dir(const std::string& name_or_path);

// The names resolve_data_dir knows, as a user would type them: "mnist", "fashion-mnist",
// "mnist-rotated[:DEG|:LO..HI]", "fashion-mnist-rotated[:DEG|:LO..HI]" (without the
// rotation, -90..90).
std::vector<std::string> known_data_sets();

// Where known names are looked up, in order: $ZOTRAIN_DATA (if set), ./data, /usr/share/datasets,
// as absolute paths.
std::vector<std::string> data_search_dirs();

}  // namespace zotrain
