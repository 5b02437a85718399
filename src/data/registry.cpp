#include "zotrain/data/registry.h"

#include <cstdlib>
#include <filesystem>
#include <iterator>

#include "zotrain/core/error.h"

namespace zotrain {
namespace fs = std::filesystem;
namespace {

// Tags the Rng stream so the split never shares numbers with other users of the same seed.
constexpr uint64_t kSplitStream = 0x53504C4954000000ull;  // "SPLIT"
constexpr int kKnownClasses = 10;                         // both MNIST and Fashion-MNIST

const char* const kTrainImages = "train-images-idx3-ubyte";
const char* const kTrainLabels = "train-labels-idx1-ubyte";
const char* const kTestImages = "t10k-images-idx3-ubyte";
const char* const kTestLabels = "t10k-labels-idx1-ubyte";
const char* const kFiles[] = {kTrainImages, kTrainLabels, kTestImages, kTestLabels};
const char* const kWanted =
    "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and "
    "t10k-labels-idx1-ubyte (each raw or .gz)";

bool is_known(const std::string& name) {
  for (const auto& k : known_data_sets())
    if (k == name) return true;
  return false;
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s;
}

// `base` or `base.gz` in `dir`, preferring the raw file (faster to read); empty if neither.
std::string find_file(const fs::path& dir, const std::string& base) {
  std::error_code ec;
  for (const std::string& f : {base, base + ".gz"})
    if (fs::is_regular_file(dir / f, ec)) return (dir / f).string();
  return "";
}

std::vector<std::string> missing_files(const fs::path& dir) {
  std::vector<std::string> missing;
  for (const char* f : kFiles)
    if (find_file(dir, f).empty()) missing.push_back(f);
  return missing;
}

std::string resolve_known(const std::string& name) {
  std::vector<std::string> searched;
  std::string incomplete;
  for (const auto& dir : data_search_dirs()) {
    fs::path folder = fs::path(dir) / name;
    searched.push_back(folder.string());
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) continue;
    auto missing = missing_files(folder);
    if (missing.empty()) return folder.string();
    if (incomplete.empty())
      incomplete = "; " + folder.string() + " exists but lacks " + join(missing);
  }
  throw InputError("data set '" + name + "' not found: looked for " + kWanted + " in " +
                   join(searched) + incomplete + ". Run scripts/setup.sh to fetch it, or set " +
                   "ZOTRAIN_DATA to a folder holding " + name + "/");
}

std::string resolve_path(const std::string& path) {
  fs::path folder = fs::absolute(path).lexically_normal();
  std::error_code ec;
  if (!fs::exists(folder, ec))
    throw InputError(folder.string() + ": no such data folder; expected a folder holding " +
                     kWanted);
  if (!fs::is_directory(folder, ec))
    throw InputError(folder.string() + ": is not a folder; expected a folder holding " + kWanted);
  auto missing = missing_files(folder);
  if (missing.size() == std::size(kFiles))
    throw InputError(folder.string() + ": holds no data-set files; expected a folder holding " +
                     kWanted);
  if (!missing.empty())
    throw InputError(folder.string() + ": data folder lacks " + join(missing) +
                     "; expected a folder holding " + kWanted);
  return folder.string();
}

}  // namespace

std::vector<std::string> known_data_sets() {
  return {"mnist", "fashion-mnist"};
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
  if (is_known(name_or_path)) return resolve_known(name_or_path);
  std::error_code ec;
  if (name_or_path.find('/') != std::string::npos || fs::is_directory(name_or_path, ec))
    return resolve_path(name_or_path);
  throw InputError("unknown data set '" + name_or_path + "': known names are " +
                   join(known_data_sets()) + " (looked up in " + join(data_search_dirs()) +
                   "), or give the path of a folder holding " + kWanted);
}

DataSplits load_data(const std::string& name_or_path, const DataOptions& options) {
  const fs::path dir = resolve_data_dir(name_or_path);
  const std::string train_images = find_file(dir, kTrainImages);
  const std::string test_images = find_file(dir, kTestImages);
  const int classes = is_known(name_or_path) ? kKnownClasses : 0;

  Dataset full = load_idx_pair(train_images, find_file(dir, kTrainLabels), name_or_path, classes);
  DataSplits s;
  // The test labels must fit the classes the training set defines.
  s.test = load_idx_pair(test_images, find_file(dir, kTestLabels), name_or_path, full.num_classes);
  if (s.test.item_shape != full.item_shape)
    throw InputError(test_images + ": image size " + s.test.item_shape.str() +
                     " does not match image size " + full.item_shape.str() + " in " + train_images);

  const int64_t n = full.size();
  if (options.val_size < 0)
    throw InputError("validation size (val_size) is " + std::to_string(options.val_size) +
                     "; expected 0 or more");
  if (options.val_size >= n)
    throw InputError("validation size (val_size) " + std::to_string(options.val_size) +
                     " leaves no training examples: " + train_images + " holds only " +
                     std::to_string(n));
  if (options.train_limit < 0)
    throw InputError("train limit (train_limit) is " + std::to_string(options.train_limit) +
                     "; expected 0 (all) or more");

  Rng rng(options.seed, kSplitStream);
  std::vector<int64_t> perm = random_permutation(n, rng);
  const int64_t n_train = n - options.val_size;
  std::vector<int64_t> val_idx(perm.begin() + n_train, perm.end());
  perm.resize(static_cast<size_t>(n_train));
  if (options.train_limit > 0 && options.train_limit < n_train)
    perm.resize(static_cast<size_t>(options.train_limit));
  s.train = full.subset(perm);
  s.val = full.subset(val_idx);
  return s;
}

}  // namespace zotrain
