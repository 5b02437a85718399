#include "core/memory_planner.h"

#include <algorithm>
#include <numeric>

#include "zotrain/core/error.h"
#include "zotrain/core/tensor.h"

namespace zotrain {

int MemoryPlanner::add(size_t bytes, int first, int last) {
  ZT_ASSERT(first <= last);
  buffers_.push_back({align_up(bytes ? bytes : 1), first, last});
  return static_cast<int>(buffers_.size()) - 1;
}

void MemoryPlanner::extend(int id, int at) {
  Buffer& b = buffers_[static_cast<size_t>(id)];
  b.first = std::min(b.first, at);
  b.last = std::max(b.last, at);
}

void MemoryPlanner::plan() {
  const size_t n = buffers_.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  // Largest first; ties in the order they were added, so the plan depends on nothing else.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return buffers_[a].bytes > buffers_[b].bytes; });
  offset_.assign(n, 0);
  std::vector<size_t> placed;
  total_ = 0;
  for (size_t id : order) {
    const Buffer& b = buffers_[id];
    // The placed buffers alive with this one, by offset: take the first gap that fits.
    std::vector<size_t> live;
    for (size_t p : placed)
      if (buffers_[p].first <= b.last && b.first <= buffers_[p].last) live.push_back(p);
    std::sort(live.begin(), live.end(),
              [&](size_t x, size_t y) { return offset_[x] < offset_[y]; });
    size_t at = 0;
    for (size_t p : live) {
      if (offset_[p] >= at + b.bytes) break;
      at = std::max(at, offset_[p] + buffers_[p].bytes);
    }
    offset_[id] = at;
    total_ = std::max(total_, at + b.bytes);
    placed.push_back(id);
  }
}

bool MemoryPlanner::overlaps() const {
  for (size_t a = 0; a < buffers_.size(); ++a)
    for (size_t b = a + 1; b < buffers_.size(); ++b) {
      const Buffer &x = buffers_[a], &y = buffers_[b];
      const bool alive_together = x.first <= y.last && y.first <= x.last;
      const bool share = offset_[a] < offset_[b] + y.bytes && offset_[b] < offset_[a] + x.bytes;
      if (alive_together && share) return true;
    }
  return false;
}

}  // namespace zotrain
