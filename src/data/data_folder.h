// Finding a data set's folder, reading its files and splitting it: what the image registry
// (registry.cpp), the image readers and the point-cloud registry (point_registry.cpp) share.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "zotrain/data/registry.h"

namespace zotrain::detail {

// The files a data folder must hold, and how messages describe them.
struct FolderLayout {
  std::vector<std::string> files;
  bool gzip_too;               // each file may be present as <file>.gz instead
  std::string wanted;          // e.g. "train_files.txt and test_files.txt"
  bool class_folders = false;  // holds one sub-folder per class (and no `files`)
};

std::string join(const std::vector<std::string>& items);

// `base` (or, if the layout allows, `base.gz`) in `dir`, preferring the raw file (faster to read);
// empty if neither.
std::string find_file(const std::filesystem::path& dir, const std::string& base, bool gzip_too);

// The first <dir>/<folder> over data_search_dirs() and then `folders` holding every file of
// `layout` (with class_folders, at least one sub-folder). Otherwise an InputError naming data set
// `name`, every folder searched and what an incomplete one lacks.
std::string find_known_folder(const std::string& name, const std::vector<std::string>& folders,
                              const FolderLayout& layout);

// Whether `dir` holds at least one sub-folder.
bool has_subfolder(const std::filesystem::path& dir);

// The whole content of the file at `path`; InputError naming it, and `what` it should be, when it
// is missing or cannot be read.
std::vector<uint8_t> read_file_bytes(const std::string& path, const std::string& what);

// `path` made absolute, if it is a folder holding every file of `layout`; else an InputError
// naming it and what it lacks.
std::string check_folder(const std::string& path, const FolderLayout& layout);

struct SplitIndices {
  std::vector<int64_t> train, val;
};

// The split load_data documents, of the n examples of `train_file` (named in messages): checks
// options.val_size and options.train_limit, then cuts a seeded permutation of 0..n-1.
SplitIndices split_indices(int64_t n, const DataOptions& options, const std::string& train_file);

struct HeldOut {
  std::vector<int64_t> test, rest;  // each in increasing index order
};

// The test set of a data set that has no test files: in each class, one in kHeldOutShare of its
// examples (rounded down), picked by a permutation that depends on the class alone, so that the
// test set is the same for every seed and run. `labels` are the examples' classes.
constexpr int64_t kHeldOutShare = 5;  // 20 %, EuroSAT's validation share in the QScheduler paper
HeldOut hold_out_test(const std::vector<uint8_t>& labels, int num_classes);

}  // namespace zotrain::detail
