// Finding a data set's folder and splitting its training file: what the image registry
// (registry.cpp) and the point-cloud registry (point_registry.cpp) share.
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
  bool gzip_too;       // each file may be present as <file>.gz instead
  std::string wanted;  // e.g. "train_files.txt and test_files.txt"
};

std::string join(const std::vector<std::string>& items);

// `base` (or, if the layout allows, `base.gz`) in `dir`, preferring the raw file (faster to read);
// empty if neither.
std::string find_file(const std::filesystem::path& dir, const std::string& base, bool gzip_too);

// The first <dir>/<folder> over data_search_dirs() holding every file of `layout`. Otherwise an
// InputError naming data set `name`, every folder searched and what an incomplete one lacks.
std::string find_known_folder(const std::string& name, const std::string& folder,
                              const FolderLayout& layout);

// `path` made absolute, if it is a folder holding every file of `layout`; else an InputError
// naming it and what it lacks.
std::string check_folder(const std::string& path, const FolderLayout& layout);

struct SplitIndices {
  std::vector<int64_t> train, val;
};

// The split load_data documents, of the n examples of `train_file` (named in messages): checks
// options.val_size and options.train_limit, then cuts a seeded permutation of 0..n-1.
SplitIndices split_indices(int64_t n, const DataOptions& options, const std::string& train_file);

}  // namespace zotrain::detail
