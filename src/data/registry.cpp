#include "zotrain/data/registry.h"

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "data/image_folder.h"
#include "data/rotate.h"
#include "data/stl10.h"
#include "data_folder.h"
#include "zotrain/core/error.h"
#include "zotrain/data/point_registry.h"

namespace zotrain {
namespace fs = std::filesystem;
using detail::find_file;
using detail::join;

namespace {

constexpr int kIdxKnownClasses = 10;  // both MNIST and Fashion-MNIST
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
const char* const kStl10TrainX = "train_X.bin";
const char* const kStl10TrainY = "train_y.bin";
const char* const kStl10TestX = "test_X.bin";
const char* const kStl10TestY = "test_y.bin";

// How a folder stores its images.
enum class Format { kIdx, kStl10, kImageFolder };

const detail::FolderLayout& layout_of(Format format) {
  static const detail::FolderLayout idx{
      {kTrainImages, kTrainLabels, kTestImages, kTestLabels},
      true,
      "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and "
      "t10k-labels-idx1-ubyte (each raw or .gz)"};
  static const detail::FolderLayout stl10{{kStl10TrainX, kStl10TrainY, kStl10TestX, kStl10TestY},
                                          false,
                                          "STL-10's train_X.bin, train_y.bin, test_X.bin and "
                                          "test_y.bin"};
  static const detail::FolderLayout image_folder{
      {}, false, "one sub-folder of JPEG images per class", true};
  switch (format) {
    case Format::kIdx:
      return idx;
    case Format::kStl10:
      return stl10;
    case Format::kImageFolder:
      break;
  }
  return image_folder;
}

// What a folder given by path may hold, for messages.
const std::string& any_format() {
  static const std::string s = layout_of(Format::kIdx).wanted + "; or " +
                               layout_of(Format::kStl10).wanted + "; or " +
                               layout_of(Format::kImageFolder).wanted;
  return s;
}

struct KnownSet {
  const char* name;
  Format format;
  std::vector<std::string> folders;  // looked for in this order in each search dir
};

const std::vector<KnownSet>& known_sets() {
  static const std::vector<KnownSet> sets = {
      {"mnist", Format::kIdx, {"mnist"}},
      {"fashion-mnist", Format::kIdx, {"fashion-mnist"}},
      // EuroSAT.zip (RGB) unpacked into eurosat/, as torchvision keeps it, or its 2750/ renamed.
      {"eurosat", Format::kImageFolder, {"eurosat/2750", "eurosat"}},
      // stl10_binary.tar.gz unpacked, or its folder renamed.
      {"stl10", Format::kStl10, {"stl10_binary", "stl10"}},
  };
  return sets;
}

const KnownSet* find_known(const std::string& name) {
  for (const KnownSet& set : known_sets())
    if (name == set.name) return &set;
  return nullptr;
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

// A data set's folder and how it stores its images.
struct Source {
  Format format;
  std::string dir;
};

bool holds_any(const fs::path& dir, const detail::FolderLayout& layout) {
  for (const auto& f : layout.files)
    if (!find_file(dir, f, layout.gzip_too).empty()) return true;
  return false;
}

// A folder given by path: STL-10 or IDX by its files, else class folders if it has sub-folders.
Source locate_folder(const std::string& path) {
  for (Format format : {Format::kStl10, Format::kIdx})
    if (holds_any(path, layout_of(format)))
      return {format, detail::check_folder(path, layout_of(format))};
  std::error_code ec;
  if (fs::is_directory(path, ec) && detail::has_subfolder(path))
    return {Format::kImageFolder, fs::absolute(path).lexically_normal().string()};
  // Throws, naming the folder and every format.
  return {Format::kIdx,
          detail::check_folder(path, {layout_of(Format::kIdx).files, true, any_format()})};
}

Source locate(const std::string& name_or_path) {
  // Known names win over a same-named folder in the working directory; "./mnist" reaches that.
  const ParsedName parsed = parse_name(name_or_path);
  if (const KnownSet* known = find_known(parsed.files))
    return {known->format,
            detail::find_known_folder(parsed.files, known->folders, layout_of(known->format))};
  if (is_point_data_set(name_or_path))
    throw InputError("data set '" + name_or_path +
                     "' holds point clouds, not images; image models cannot read it");
  std::error_code ec;
  if (name_or_path.find('/') != std::string::npos || fs::is_directory(name_or_path, ec))
    return locate_folder(name_or_path);
  throw InputError("unknown data set '" + name_or_path + "': known names are " +
                   join(known_data_sets()) + " (looked up in " + join(data_search_dirs()) +
                   "), or give the path of a folder holding " + any_format());
}

// The training and test files of a folder, read.
struct TrainTest {
  Dataset train, test;
  std::string train_file;  // named in messages about the split
};

TrainTest read_idx_folder(const fs::path& dir, const std::string& name_or_path) {
  TrainTest t;
  t.train_file = find_file(dir, kTrainImages, true);
  const std::string test_images = find_file(dir, kTestImages, true);
  const int classes = is_upright(parse_name(name_or_path).files) ? kIdxKnownClasses : 0;
  t.train = load_idx_pair(t.train_file, find_file(dir, kTrainLabels, true), name_or_path, classes);
  // The test labels must fit the classes the training set defines.
  t.test = load_idx_pair(test_images, find_file(dir, kTestLabels, true), name_or_path,
                         t.train.num_classes);
  if (t.test.item_shape != t.train.item_shape)
    throw InputError(test_images + ": image size " + t.test.item_shape.str() +
                     " does not match image size " + t.train.item_shape.str() + " in " +
                     t.train_file);
  // Rotating before the split keys each angle to the example's place in its file, so the split
  // seed changes which examples are held out but never their angles.
  if (auto rotation = parse_name(name_or_path).rotation) {
    rotate_dataset(t.train, *rotation, kRotateTrainStream);
    rotate_dataset(t.test, *rotation, kRotateTestStream);
  }
  return t;
}

TrainTest read_stl10_folder(const fs::path& dir, const std::string& name) {
  TrainTest t;
  t.train_file = (dir / kStl10TrainX).string();
  t.train = load_stl10_pair(t.train_file, (dir / kStl10TrainY).string(), name);
  t.test = load_stl10_pair((dir / kStl10TestX).string(), (dir / kStl10TestY).string(), name);
  return t;
}

DataSplits split_train_file(TrainTest t, const DataOptions& options) {
  const detail::SplitIndices split = detail::split_indices(t.train.size(), options, t.train_file);
  DataSplits s;
  s.train = t.train.subset(split.train);
  s.val = t.train.subset(split.val);
  s.test = std::move(t.test);
  return s;
}

// A set without test files: the held-out fifth (detail::hold_out_test) is the test set, and the
// rest is split as a training file would be.
DataSplits split_held_out(const Dataset& all, const DataOptions& options, const std::string& dir) {
  const detail::HeldOut held = detail::hold_out_test(all.labels, all.num_classes);
  const detail::SplitIndices split = detail::split_indices(
      static_cast<int64_t>(held.rest.size()), options, dir + " (less its held-out test images)");
  auto pick = [&](const std::vector<int64_t>& among_rest) {
    std::vector<int64_t> indices;
    for (int64_t i : among_rest) indices.push_back(held.rest[static_cast<size_t>(i)]);
    return all.subset(indices);
  };
  DataSplits s;
  s.train = pick(split.train);
  s.val = pick(split.val);
  s.test = all.subset(held.test);
  return s;
}

}  // namespace

std::vector<std::string> known_data_sets() {
  return {"mnist",
          "fashion-mnist",
          "mnist-rotated[:DEG|:LO..HI]",
          "fashion-mnist-rotated[:DEG|:LO..HI]",
          "eurosat",
          "stl10"};
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
  return locate(name_or_path).dir;
}

DataSplits load_data(const std::string& name_or_path, const DataOptions& options) {
  if (options.test_limit < 0)
    throw InputError("test limit (test_limit) is " + std::to_string(options.test_limit) +
                     "; expected 0 (all) or more");
  const Source src = locate(name_or_path);
  DataSplits s;
  switch (src.format) {
    case Format::kIdx:
      s = split_train_file(read_idx_folder(src.dir, name_or_path), options);
      break;
    case Format::kStl10:
      s = split_train_file(read_stl10_folder(src.dir, name_or_path), options);
      break;
    case Format::kImageFolder:
      s = split_held_out(load_image_folder(src.dir, name_or_path), options, src.dir);
      break;
  }
  if (options.test_limit > 0 && options.test_limit < s.test.size()) {
    std::vector<int64_t> first(static_cast<size_t>(options.test_limit));
    for (size_t i = 0; i < first.size(); ++i) first[i] = static_cast<int64_t>(i);
    s.test = s.test.subset(first);
  }
  return s;
}

}  // namespace zotrain
