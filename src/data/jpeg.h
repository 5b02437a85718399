// Internal to src/data: JPEG decoding through libjpeg (Debian's libjpeg-turbo).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zotrain/core/shape.h"

namespace zotrain::detail {

struct Image {
  Shape shape;                  // {C, H, W}
  std::vector<uint8_t> pixels;  // [C, H, W]
};

// Decodes the JPEG file at `path`: a grayscale image to 1 channel, any other to 3 (RGB). Throws
// InputError naming the file when it is missing, is not a JPEG, or is corrupt; libjpeg's warnings
// (a stream cut short, bad data it would paper over) count as corruption.
Image read_jpeg(const std::string& path);

}  // namespace zotrain::detail
