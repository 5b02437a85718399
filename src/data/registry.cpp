#include "zotrain/data/registry.h"

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "data_folder.h"
#include "zotrain/core/error.h"
#include "zotrain/data/point_registry.h"
#include "zotrain/data/rotate.h"

namespace zotrain {
namespace fs = std::filesystem;
using detail::find_file;
using detail::join;

namespace {

constexpr int kKnownClasses = 10;  // both MNIST and Fashion-MNIST
// Each file of a rotated set draws its angles from its own stream, so the test image with the
// same index as a training image does not get the same angle.
constexpr uint64_t kRotateTrainStream = 0x524F545452000000ull;  // "ROTTR"
constexpr uint64_t kRotateTestStream = 0x524F545445000000ull;   // "ROTTE"

const char* const kRotatedSuffix = "-rotated";
// What "mnist-rotated" alone means (docs/data.md).
const char* const kDefaultRotation = "-90..90";

const char* const kTrainImages = "train-images-idx3-ubyte";
const char* const kTrainLabels = "train-labels-idx1-ubyte";
const char* const kTestImages = "t10k-images-idx3-ubyte";
const char* const kTestLabels = "t10k-labels-idx1-ubyte";

const detail::FolderLayout& idx_layout() {
  static const detail::FolderLayout layout{
      {kTrainImages, kTrainLabels, kTestImages, kTestLabels},
      true,
      "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and "
      "t10k-labels-idx1-ubyte (each raw or .gz)"};
  return layout;
}

// The upright sets rotated variants are made from.
bool is_upright(const std::string& name) {
  return name == "mnist" || name == "fashion-mnist";
}

// A name split into the upright set whose files it reads and the rotation it applies:
// "mnist-rotated:30" reads mnist's files and turns every image by 30 degrees.
struct ParsedName {
  std::string files;                 // a known upright name, or whatever the user gave
  std::optional<Rotation> rotation;  // set for a rotated set
};

ParsedName parse_name(const std::string& name) {
  const size_t colon = name.find(':');
  const std::string head = name.substr(0, colon);
  const size_t suffix = std::string(kRotatedSuffix).size();
  if (head.size() <= suffix || !head.ends_with(kRotatedSuffix)) return {name, std::nullopt};
  const std::string upright = head.substr(0, head.size() - suffix);
  if (!is_upright(upright)) return {name, std::nullopt};
  const std::string angles = colon == std::string::npos ? kDefaultRotation : name.substr(colon + 1);
  return {upright, parse_rotation(angles, "data set '" + name + "'")};
}

bool is_known(const std::string& name) {
  return is_upright(parse_name(name).files);
}

}  // namespace

std::vector<std::string> known_data_sets() {
  return {"mnist", "fashion-mnist", "mnist-rotated[:DEG|:LO..HI]",
          "fashion-mnist-rotated[:DEG|:LO..HI]"};
}

std::vector<std::string> data_search_dirs() {
  std::vector<std::string> dirs;
  const char* env = std::getenv("ZOTRAIN_DATA");
  if (env && *env) dirs.push_back(fs::absolute(env).lexically_normal().string());
  dirs.push_back((fs::current_path() / "data").string());
  dirs.push_back("/usr/share/datasets");
  return dirs;
}

std::string resolve_data_dir(const std::string& name_or_path) {
  // Known names win over a same-named folder in the working directory; "./mnist" reaches that.
  const ParsedName parsed = parse_name(name_or_path);
  if (is_upright(parsed.files))
    return detail::find_known_folder(parsed.files, parsed.files, idx_layout());
  if (is_point_data_set(name_or_path))
    throw InputError("data set '" + name_or_path +
                     "' holds point clouds, not images; image models cannot read it");
  std::error_code ec;
  if (name_or_path.find('/') != std::string::npos || fs::is_directory(name_or_path, ec))
    return detail::check_folder(name_or_path, idx_layout());
  throw InputError("unknown data set '" + name_or_path + "': known names are " +
                   join(known_data_sets()) + " (looked up in " + join(data_search_dirs()) +
                   "), or give the path of a folder holding " + idx_layout().wanted);
}

DataSplits load_data(const std::string& name_or_path, const DataOptions& options) {
  const fs::path dir = resolve_data_dir(name_or_path);
  const std::string train_images = find_file(dir, kTrainImages, true);
  const std::string test_images = find_file(dir, kTestImages, true);
  const int classes = is_known(name_or_path) ? kKnownClasses : 0;

  Dataset full =
      load_idx_pair(train_images, find_file(dir, kTrainLabels, true), name_or_path, classes);
  DataSplits s;
  // The test labels must fit the classes the training set defines.
  s.test =
      load_idx_pair(test_images, find_file(dir, kTestLabels, true), name_or_path, full.num_classes);
  if (s.test.item_shape != full.item_shape)
    throw InputError(test_images + ": image size " + s.test.item_shape.str() +
                     " does not match image size " + full.item_shape.str() + " in " + train_images);
  // Rotating before the split keys each angle to the example's place in its file, so the split
  // seed changes which examples are held out but never their angles.
  if (auto rotation = parse_name(name_or_path).rotation) {
    rotate_dataset(full, *rotation, kRotateTrainStream);
    rotate_dataset(s.test, *rotation, kRotateTestStream);
  }

  const detail::SplitIndices split = detail::split_indices(full.size(), options, train_images);
  s.train = full.subset(split.train);
  s.val = full.subset(split.val);
  return s;
}

}  // namespace zotrain
