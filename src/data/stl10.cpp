#include "data/stl10.h"

#include "data_folder.h"
#include "zotrain/core/error.h"

namespace zotrain {

Dataset load_stl10_pair(const std::string& images_path, const std::string& labels_path,
                        const std::string& name) {
  constexpr int64_t plane = kStl10Side * kStl10Side, image = 3 * plane;
  const std::vector<uint8_t> x = detail::read_file_bytes(images_path, "STL-10 images");
  const std::vector<uint8_t> y = detail::read_file_bytes(labels_path, "STL-10 labels");
  const int64_t n = static_cast<int64_t>(x.size()) / image;
  if (x.empty() || static_cast<int64_t>(x.size()) % image != 0)
    throw InputError(images_path + ": " + std::to_string(x.size()) +
                     " bytes is not a whole, nonzero number of STL-10 images of " +
                     std::to_string(image) + " bytes (3 x 96 x 96)");
  if (static_cast<int64_t>(y.size()) != n)
    throw InputError(labels_path + ": holds " + std::to_string(y.size()) +
                     " labels; expected one byte per image, " + std::to_string(n) + " as in " +
                     images_path);

  Dataset ds;
  ds.name = name;
  ds.item_shape = Shape{3, kStl10Side, kStl10Side};
  ds.num_classes = kStl10Classes;
  ds.labels.resize(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    if (y[i] < 1 || y[i] > kStl10Classes)
      throw InputError(labels_path + ": label " + std::to_string(y[i]) + " at index " +
                       std::to_string(i) + " is out of range; STL-10 labels are 1 to " +
                       std::to_string(kStl10Classes));
    ds.labels[i] = static_cast<uint8_t>(y[i] - 1);
  }
  // Each plane is stored column by column: pixel (row r, column c) at c * 96 + r.
  ds.pixels.resize(x.size());
  for (int64_t p = 0; p < n * 3; ++p) {
    const uint8_t* src = x.data() + p * plane;
    uint8_t* dst = ds.pixels.data() + p * plane;
    for (int64_t r = 0; r < kStl10Side; ++r)
      for (int64_t c = 0; c < kStl10Side; ++c) dst[r * kStl10Side + c] = src[c * kStl10Side + r];
  }
  return ds;
}

}  // namespace zotrain
