// Rotated images, for the rotated MNIST / Fashion-MNIST sets that fine-tuning runs on
// (docs/data.md). A rotation is a fixed angle or a range that each example draws its angle from.
#pragma once

#include <cstdint>
#include <string>

#include "zotrain/data/dataset.h"

namespace zotrain {

// Degrees, counter-clockwise as the image is displayed (rows top to bottom).
struct Rotation {
  double lo = 0, hi = 0;  // lo == hi: every image turns by lo; else uniform in [lo, hi)
  bool operator==(const Rotation&) const = default;
};

// Parses "DEG" (fixed) or "LO..HI" (a range, LO < HI), each a finite decimal number of degrees.
// `where` names the setting in the InputError thrown for anything else.
Rotation parse_rotation(const std::string& text, const std::string& where);

// The angle of example `index` of a file: `r.lo` if fixed, else a uniform draw keyed by (stream,
// index) alone, so an example gets the same angle in every run, split and process.
double rotation_angle(const Rotation& r, uint64_t stream, int64_t index);

// Rotates a [channels, h, w] image by `degrees` about its centre with bilinear interpolation;
// pixels whose source lies outside the image are 0. `in` and `out` must not overlap.
void rotate_image(const uint8_t* in, uint8_t* out, int64_t channels, int64_t h, int64_t w,
                  double degrees);

// Rotates every example i of `data` by rotation_angle(r, stream, i), in place.
void rotate_dataset(Dataset& data, const Rotation& r, uint64_t stream);

}  // namespace zotrain
