#include "data/image_folder.h"

#include <algorithm>
#include <filesystem>

#include "jpeg.h"
#include "zotrain/core/error.h"

namespace zotrain {
namespace fs = std::filesystem;
namespace {

constexpr int kMaxClasses = 256;  // labels are uint8

// The entries of `dir` that are not hidden, sorted by name: the same order on every file system.
std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (!e.path().filename().string().starts_with('.')) entries.push_back(e.path());
  if (ec) throw InputError(dir.string() + ": cannot be listed (" + ec.message() + ")");
  std::sort(entries.begin(), entries.end());
  return entries;
}

}  // namespace

Dataset load_image_folder(const std::string& dir, const std::string& name) {
  const std::string expected = "; expected one sub-folder of JPEG images per class";
  std::vector<fs::path> classes = sorted_entries(dir);
  std::error_code ec;
  for (const auto& c : classes)
    if (!fs::is_directory(c, ec))
      throw InputError(c.string() + ": is a file beside the class folders" + expected);
  if (classes.size() < 2 || classes.size() > kMaxClasses)
    throw InputError(dir + ": holds " + std::to_string(classes.size()) +
                     " class folders; expected 2 to " + std::to_string(kMaxClasses) + expected);

  // Every file is listed before any is decoded, so that a misplaced folder is reported at once
  // and the pixels can be allocated in one piece.
  std::vector<std::vector<fs::path>> files;
  size_t total = 0;
  for (const auto& c : classes) {
    files.push_back(sorted_entries(c));
    if (files.back().empty())
      throw InputError(c.string() + ": class folder holds no images" + expected);
    for (const auto& f : files.back())
      if (fs::is_directory(f, ec))
        throw InputError(f.string() + ": is a folder inside a class folder" + expected);
    total += files.back().size();
  }

  Dataset ds;
  ds.name = name;
  ds.num_classes = static_cast<int>(classes.size());
  ds.labels.reserve(total);
  std::string first;  // the image that set the size
  for (size_t label = 0; label < files.size(); ++label)
    for (const auto& f : files[label]) {
      detail::Image image = detail::read_jpeg(f.string());
      if (first.empty()) {
        first = f.string();
        ds.item_shape = image.shape;
        ds.pixels.reserve(total * image.pixels.size());
      } else if (image.shape != ds.item_shape) {
        throw InputError(f.string() + ": image is " + image.shape.str() +
                         " ([C, H, W]); expected " + ds.item_shape.str() + " like " + first +
                         " (all images of a set must have one size)");
      }
      ds.pixels.insert(ds.pixels.end(), image.pixels.begin(), image.pixels.end());
      ds.labels.push_back(static_cast<uint8_t>(label));
    }
  return ds;
}

}  // namespace zotrain
