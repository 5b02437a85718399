// Picking examples out of a data set's flat arrays, shared by Dataset and PointCloudSet.
#pragma once

#include <cstdint>
#include <vector>

#include "zotrain/core/error.h"

namespace zotrain::detail {

// The items at `indices`, in that order, of `items`: consecutive items of `width` elements each.
template <class T>
std::vector<T> gather(const std::vector<T>& items, int64_t width,
                      const std::vector<int64_t>& indices) {
  std::vector<T> out;
  out.reserve(indices.size() * static_cast<size_t>(width));
  for (int64_t i : indices) {
    ZT_ASSERT(i >= 0 && (i + 1) * width <= static_cast<int64_t>(items.size()));
    out.insert(out.end(), items.begin() + i * width, items.begin() + (i + 1) * width);
  }
  return out;
}

}  // namespace zotrain::detail
