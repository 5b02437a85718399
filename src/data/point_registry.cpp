#include "zotrain/data/point_registry.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "data/point_h5.h"
#include "data_folder.h"
#include "zotrain/core/error.h"

namespace zotrain {
namespace fs = std::filesystem;
namespace {

const char* const kTrainList = "train_files.txt";
const char* const kTestList = "test_files.txt";
const char* const kShapeNames = "shape_names.txt";

const detail::FolderLayout& point_layout() {
  static const detail::FolderLayout layout{
      {kTrainList, kTestList},
      false,
      "train_files.txt and test_files.txt (lists of HDF5 files, ModelNet40's layout)"};
  return layout;
}

// The folder each known name is distributed as.
std::string known_folder(const std::string& name) {
  if (name == "modelnet40") return "modelnet40_ply_hdf5_2048";
  if (name == "modelnet40-standin") return "modelnet40-standin";
  return "";
}

// The non-empty lines of a text file, without surrounding whitespace (the lists may have CRLFs).
std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot be read");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    lines.push_back(line.substr(first, line.find_last_not_of(" \t\r") - first + 1));
  }
  return lines;
}

// Every label below `classes` (if nonzero, else anything goes); `classes_from` says why.
void check_labels(const PointCloudSet& part, int classes, const std::string& classes_from) {
  auto bad = std::find_if(part.labels.begin(), part.labels.end(),
                          [&](uint8_t l) { return classes > 0 && l >= classes; });
  if (bad != part.labels.end())
    throw InputError(part.name + ": dataset 'label' holds " + std::to_string(*bad) + " at cloud " +
                     std::to_string(bad - part.labels.begin()) + "; expected 0 to " +
                     std::to_string(classes - 1) + " (" + std::to_string(classes) +
                     " classes, from " + classes_from + ")");
}

// The clouds of every file `list` names, concatenated; labels checked as check_labels does.
PointCloudSet read_list(const fs::path& dir, const std::string& list, int classes,
                        const std::string& classes_from) {
  const std::string list_path = (dir / list).string();
  const std::vector<std::string> entries = read_lines(list_path);
  if (entries.empty()) throw InputError(list_path + ": lists no files; expected one .h5 per line");
  PointCloudSet all;
  std::string first_file;
  for (size_t i = 0; i < entries.size(); ++i) {
    std::error_code ec;
    fs::path file = dir / entries[i];
    if (!fs::is_regular_file(file, ec)) file = dir / fs::path(entries[i]).filename();
    if (!fs::is_regular_file(file, ec))
      throw InputError(list_path + ": line " + std::to_string(i + 1) + " names '" + entries[i] +
                       "', found neither as " + (dir / entries[i]).string() + " nor as " +
                       file.string());
    PointCloudSet part = read_point_h5(file.string());
    check_labels(part, classes, classes_from);
    if (i == 0) {
      all = std::move(part);
      first_file = file.string();
      continue;
    }
    if (part.points_per_cloud != all.points_per_cloud)
      throw InputError(file.string() + ": dataset 'data' has " +
                       std::to_string(part.points_per_cloud) + " points per cloud; expected " +
                       std::to_string(all.points_per_cloud) + " like " + first_file);
    all.points.insert(all.points.end(), part.points.begin(), part.points.end());
    all.labels.insert(all.labels.end(), part.labels.begin(), part.labels.end());
  }
  return all;
}

}  // namespace

std::vector<std::string> known_point_data_sets() {
  return {"modelnet40", "modelnet40-standin"};
}

bool is_point_data_set(const std::string& name) {
  return !known_folder(name).empty();
}

std::string resolve_point_data_dir(const std::string& name_or_path) {
  if (is_point_data_set(name_or_path))
    return detail::find_known_folder(name_or_path, {known_folder(name_or_path)}, point_layout());
  std::error_code ec;
  if (name_or_path.find('/') != std::string::npos || fs::is_directory(name_or_path, ec))
    return detail::check_folder(name_or_path, point_layout());
  throw InputError("unknown point-cloud data set '" + name_or_path + "': known names are " +
                   detail::join(known_point_data_sets()) + " (looked up in " +
                   detail::join(data_search_dirs()) + "), or give the path of a folder holding " +
                   point_layout().wanted);
}

PointSplits load_point_data(const std::string& name_or_path, const DataOptions& options) {
  const fs::path dir = resolve_point_data_dir(name_or_path);
  const std::string train_list = (dir / kTrainList).string();
  const std::string test_list = (dir / kTestList).string();
  const std::string names = detail::find_file(dir, kShapeNames, false);
  int classes = 0;
  if (!names.empty()) {
    classes = static_cast<int>(read_lines(names).size());
    if (classes < 2 || classes > 256)
      throw InputError(names + ": names " + std::to_string(classes) +
                       " classes; expected 2 to 256, one per line");
  }
  PointCloudSet full = read_list(dir, kTrainList, classes, names);
  if (classes == 0)
    classes = std::max(2, *std::max_element(full.labels.begin(), full.labels.end()) + 1);
  PointSplits s;
  s.test = read_list(dir, kTestList, classes, names.empty() ? "the files of " + train_list : names);
  if (s.test.points_per_cloud != full.points_per_cloud)
    throw InputError(test_list + ": its files have " + std::to_string(s.test.points_per_cloud) +
                     " points per cloud; expected " + std::to_string(full.points_per_cloud) +
                     " like the files of " + train_list);
  full.name = s.test.name = name_or_path;
  full.num_classes = s.test.num_classes = classes;

  const detail::SplitIndices split = detail::split_indices(full.size(), options, train_list);
  s.train = full.subset(split.train);
  s.val = full.subset(split.val);
  return s;
}

}  // namespace zotrain
