// Data-set names as the CLI takes them (docs/spec/CLI.md, --data NAME|PATH), resolved to files and
// split into training, validation and test sets.
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
  int64_t test_limit = 0;   // keep only the first N test examples (file order); 0 = all
};

struct DataSplits {
  Dataset train, val, test;
};

// Loads `name_or_path` and splits it. The training files are permuted with a seeded Fisher-Yates
// shuffle; the last val_size examples of the permutation are the validation set and the others,
// in permuted order, the training set, of which train_limit then keeps the first. The test set is
// the test files (t10k, test_X/test_y), in file order, of which test_limit keeps the first. A set
// without test files (class folders of images, such as EuroSAT) first holds out a fixed fifth of
// each class as its test set, the same for every seed (docs/data.md), and splits the rest as above.
// A rotated name ("mnist-rotated:30", docs/data.md) reads the upright set's files and rotates each
// image of both files by its angle (rotation_angle, keyed by its index in its file) before the
// split. Throws InputError for an unknown name, a bad rotation, missing or corrupt files, or sizes
// that leave no training examples.
DataSplits load_data(const std::string& name_or_path, const DataOptions& options);

// The folder holding a data set, in one of three formats: the four IDX files of MNIST
// (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
// t10k-labels-idx1-ubyte, each raw or .gz), STL-10's binary files (train_X.bin, train_y.bin,
// test_X.bin, test_y.bin), or one sub-folder of JPEG images per class (EuroSAT). A known name
// (known_data_sets()) is looked up in each of data_search_dirs(): <dir>/<name>/ for the IDX sets
// (a rotated one as its upright set's folder), <dir>/eurosat/2750/ then <dir>/eurosat/, and
// <dir>/stl10_binary/ then <dir>/stl10/. Anything else containing a '/' or naming an existing
// folder is that folder, its format told by its files.
std::string resolve_data_dir(const std::string& name_or_path);

// The names resolve_data_dir knows, as a user would type them: "mnist", "fashion-mnist",
// "mnist-rotated[:DEG|:LO..HI]", "fashion-mnist-rotated[:DEG|:LO..HI]" (without the
// rotation, -90..90), "eurosat", "stl10".
std::vector<std::string> known_data_sets();

// Where known names are looked up, in order: $ZOTRAIN_DATA (if set), ./data, /usr/share/datasets,
// as absolute paths.
std::vector<std::string> data_search_dirs();

}  // namespace zotrain
