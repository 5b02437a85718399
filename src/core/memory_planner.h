// Offsets in one block for buffers with lifetimes: buffer b is in use from step first to step
// last (inclusive), and two buffers whose lifetimes overlap never share a byte; the others may.
// Greedy by size, as TensorFlow Lite Micro's greedy planner: the largest buffer first, each at
// the lowest 64-byte aligned offset that is free for its whole lifetime among those placed.
// Kept activations, ping-pong buffers and in-place reuse are all cases of it: a value read
// later in the step, or by a later pass, simply lives longer.
#pragma once

#include <cstddef>
#include <vector>

namespace zotrain {

class MemoryPlanner {
 public:
  // A buffer of `bytes` used from step `first` to step `last` (first <= last); returns its id,
  // 0, 1, ... in the order of the calls.
  int add(size_t bytes, int first, int last);
  // Buffer `id` is also used at step `at` (a later reader, or an earlier writer).
  void extend(int id, int at);
  // Places every buffer; offset() and total() are valid after it.
  void plan();
  int count() const { return static_cast<int>(buffers_.size()); }
  size_t offset(int id) const { return offset_[static_cast<size_t>(id)]; }
  // The block's bytes: the end of the last-ending placed buffer.
  size_t total() const { return total_; }
  // Whether two buffers alive at the same step share bytes (never, after plan(): for tests).
  bool overlaps() const;

 private:
  struct Buffer {
    size_t bytes;
    int first, last;
  };
  std::vector<Buffer> buffers_;
  std::vector<size_t> offset_;
  size_t total_ = 0;
};

}  // namespace zotrain
