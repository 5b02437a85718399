// A tensor shape: up to 4 dimensions, outermost first (batch, channels, height, width).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace zotrain {

struct Shape {
  static constexpr int kMaxDims = 4;
  std::array<int64_t, kMaxDims> dim{};
  int rank = 0;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);

  int64_t operator[](int i) const { return dim[i]; }
  int64_t& operator[](int i) { return dim[i]; }
  int64_t numel() const;
  // Elements per item of the outermost dimension (per batch row).
  int64_t row_numel() const;
  // Same shape with the outermost dimension replaced.
  Shape with_batch(int64_t n) const;
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string str() const;  // "[256, 1, 28, 28]"
};

}  // namespace zotrain
