// A memory plan: every buffer a run will take from the arena, listed before the first step,
// per layer and bucket. Allocation follows the plan row by row, so the arena's measured bytes
// can be checked against it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "zotrain/core/arena.h"

namespace zotrain {

struct MemoryRow {
  int layer = -1;    // index of the layer the buffer belongs to; -1 for network-wide buffers
  std::string what;  // "conv2d 1->6 k5 s1 p2 weight", "workspace", ...
  Bucket bucket = Bucket::kWorkspace;
  size_t bytes = 0;  // aligned as the arena aligns
};

struct MemoryPlan {
  std::vector<MemoryRow> rows;

  void add(int layer, std::string what, Bucket bucket, size_t raw_bytes) {
    rows.push_back({layer, std::move(what), bucket, align_up(raw_bytes ? raw_bytes : 1)});
  }
  size_t bytes(Bucket b) const {
    size_t t = 0;
    for (const auto& r : rows)
      if (r.bucket == b) t += r.bytes;
    return t;
  }
  size_t total() const {
    size_t t = 0;
    for (const auto& r : rows) t += r.bytes;
    return t;
  }
};

}  // namespace zotrain
