// Internal to src/kernels: rearranging bytes by a plan of 16-byte shuffles (x86 pshufb, NEON
// tbl), for the staging of kernels that read small planes in another layout: moving such a
// plane row by row costs more bookkeeping than bytes, a plan moves it 16 bytes a step.
#pragma once

#include <cstdint>
#include <vector>

namespace zotrain::kernels {

// One load of a plan: lane j of the 16-byte chunk being built takes src[src + index[j]] where
// index[j] < 16 (each lane from at most one window of its chunk; the others stay zero).
struct ByteWindow {
  alignas(16) uint8_t index[16];
  int32_t src;
  int32_t dst;  // the chunk's place, in its first window
};

// Chunks of the same length and number of windows (padded with windows that take no lane):
// chunk c is windows [c * per_chunk, (c + 1) * per_chunk), its first `bytes` lanes written.
struct ByteChunks {
  int per_chunk = 0, bytes = 0;
  std::vector<ByteWindow> windows;
  // The same per lane for the portable kernel: 16 per chunk, the source byte or -1 (zero).
  std::vector<int32_t> lanes;
};

struct BytePlan {
  std::vector<ByteChunks> groups;
  // Whether every window's 16 bytes lie in the source (a vector kernel may load them whole).
  bool wide = false;
};

// What plan_bytes writes at a destination byte: from[d] >= 0 is src[from[d]].
constexpr int64_t kByteZero = -1;  // 0
constexpr int64_t kByteKept = -2;  // nothing: the byte keeps its value

// The plan that writes dst[d] for every d < from.size() not kByteKept, reading only src[0,
// src_bytes). Runs of written bytes go in 16-byte chunks, the last one overlapping the one before
// (a run shorter than 16 bytes: one partial chunk), so that nothing outside them is written.
BytePlan plan_bytes(const std::vector<int64_t>& from, int64_t src_bytes);

// Carries out the plan in the active instruction set on `planes` pairs of source and destination,
// plane i from src + i * src_stride to dst + i * dst_stride, in that order.
void gather_bytes(const BytePlan& plan, int64_t planes, const int8_t* src, int64_t src_stride,
                  int8_t* dst, int64_t dst_stride);

}  // namespace zotrain::kernels
