// Image classification sets stored as one sub-folder of JPEG images per class, as EuroSAT is
// distributed (2750/AnnualCrop/AnnualCrop_1.jpg, ..., 2750/SeaLake/SeaLake_3000.jpg).
#pragma once

#include <string>

#include "zotrain/data/dataset.h"

namespace zotrain {

// Loads every image of the class folders in `dir`. The classes are the sub-folders in sorted
// name order (label i is the i-th), 2 to 256 of them; the examples are the classes' images in
// that order, each class's in sorted file-name order. Names starting with '.' (hidden files such
// as .DS_Store) are skipped. Images decode to 1 channel (grayscale) or 3 (RGB), and all must have
// the same [C, H, W]. Throws InputError naming the folder or file: a file beside the class folders,
// too few or too many classes, an empty class folder, a file that is not a JPEG or is corrupt, an
// image whose size differs from the first one's.
Dataset load_image_folder(const std::string& dir, const std::string& name);

}  // namespace zotrain
