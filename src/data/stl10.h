// STL-10's binary files (https://cs.stanford.edu/~acoates/stl10/, stl10_binary/): X files hold
// uint8 images of 3 x 96 x 96, each channel plane stored column-major (as MATLAB writes it), one
// image after another; y files one uint8 label per image, 1 to 10.
#pragma once

#include <cstdint>
#include <string>

#include "zotrain/data/dataset.h"

namespace zotrain {

constexpr int64_t kStl10Side = 96;
constexpr int kStl10Classes = 10;

// Reads an X/y pair (train_X.bin and train_y.bin, or test_X.bin and test_y.bin) into images
// [3, 96, 96] in row-major order and labels 0 to 9. Throws InputError naming the file: missing,
// empty, a size that is not a whole number of images, a label count other than the image count,
// a label outside 1 to 10.
Dataset load_stl10_pair(const std::string& images_path, const std::string& labels_path,
                        const std::string& name);

}  // namespace zotrain
