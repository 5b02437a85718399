#include "data/rotate.h"

#include <charconv>
#include <cmath>
#include <numbers>
#include <vector>

#include "zotrain/core/error.h"
#include "zotrain/core/rng.h"

namespace zotrain {
namespace {

// A whole string as a finite number, or nothing.
bool parse_degrees(std::string_view s, double& out) {
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end && std::isfinite(out);
}

}  // namespace

Rotation parse_rotation(const std::string& text, const std::string& where) {
  const std::string expected =
      "; expected an angle in degrees (e.g. 45) or a range LO..HI with LO < HI (e.g. -45..45)";
  Rotation r;
  const size_t dots = text.find("..");
  if (dots == std::string::npos) {
    if (!parse_degrees(text, r.lo))
      throw InputError(where + ": rotation '" + text + "' is not a number" + expected);
    r.hi = r.lo;
    return r;
  }
  const std::string_view all(text);
  if (!parse_degrees(all.substr(0, dots), r.lo) || !parse_degrees(all.substr(dots + 2), r.hi))
    throw InputError(where + ": rotation range '" + text + "' is not two numbers" + expected);
  if (!(r.lo < r.hi))
    throw InputError(where + ": rotation range '" + text + "' is empty" + expected);
  return r;
}

double rotation_angle(const Rotation& r, uint64_t stream, int64_t index) {
  if (r.lo == r.hi) return r.lo;
  const auto i = static_cast<uint64_t>(index);
  const Philox4x32 w = philox4x32({uint32_t(i), uint32_t(i >> 32), 0, 0}, stream);
  return r.lo + (r.hi - r.lo) * u32_to_unit(w[0]);
}

void rotate_image(const uint8_t* in, uint8_t* out, int64_t channels, int64_t h, int64_t w,
                  double degrees) {
  const double rad = degrees * std::numbers::pi / 180.0;
  const double c = std::cos(rad), s = std::sin(rad);
  const double cx = (w - 1) / 2.0, cy = (h - 1) / 2.0;
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      // The inverse rotation of the output pixel: rows grow downwards, so counter-clockwise on
      // screen turns (dx, dy) by -degrees in these coordinates.
      const double dx = x - cx, dy = y - cy;
      const double sx = cx + c * dx - s * dy, sy = cy + s * dx + c * dy;
      const double fx = std::floor(sx), fy = std::floor(sy);
      const auto x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
      const double ax = sx - fx, ay = sy - fy;
      const double weights[4] = {(1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay, ax * ay};
      const int64_t xs[4] = {x0, x0 + 1, x0, x0 + 1}, ys[4] = {y0, y0, y0 + 1, y0 + 1};
      for (int64_t ch = 0; ch < channels; ++ch) {
        const uint8_t* plane = in + ch * h * w;
        double v = 0;
        for (int k = 0; k < 4; ++k)
          if (xs[k] >= 0 && xs[k] < w && ys[k] >= 0 && ys[k] < h)
            v += weights[k] * plane[ys[k] * w + xs[k]];
        // v is a convex combination of pixels and zeros, within [0, 255]: + 0.5 rounds it.
        out[ch * h * w + y * w + x] = static_cast<uint8_t>(v + 0.5);
      }
    }
  }
}

void rotate_dataset(Dataset& data, const Rotation& r, uint64_t stream) {
  const Shape& s = data.item_shape;
  std::vector<uint8_t> upright(static_cast<size_t>(data.item_numel()));
  for (int64_t i = 0; i < data.size(); ++i) {
    uint8_t* item = data.pixels.data() + i * data.item_numel();
    upright.assign(item, item + data.item_numel());
    rotate_image(upright.data(), item, s[0], s[1], s[2], rotation_angle(r, stream, i));
  }
}

}  // namespace zotrain
