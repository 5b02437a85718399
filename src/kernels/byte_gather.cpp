#include "kernels/byte_gather.h"

#include <algorithm>
#include <cstring>

#include "kernel_set.h"
#include "zotrain/core/error.h"

namespace zotrain::kernels {

namespace {

ByteWindow empty_window() {
  ByteWindow w{};
  std::fill(std::begin(w.index), std::end(w.index), uint8_t{0x80});
  return w;
}

// The windows of the chunk dst[d0, d0 + bytes): each one the 16 source bytes that end at the
// highest one still needed (or start at 0), so that no window reads past the last byte needed
// or before src.
std::vector<ByteWindow> plan_chunk(const std::vector<int64_t>& from, int64_t d0, int bytes) {
  std::vector<ByteWindow> windows;
  bool taken[16] = {};
  for (int j = 0; j < bytes; ++j) taken[j] = from[d0 + j] < 0;
  do {
    int64_t top = -1;
    for (int j = 0; j < bytes; ++j)
      if (!taken[j]) top = std::max(top, from[d0 + j]);
    ByteWindow w = empty_window();
    w.src = static_cast<int32_t>(std::max<int64_t>(0, top - 15));
    w.dst = static_cast<int32_t>(d0);
    for (int j = 0; j < bytes; ++j)
      if (!taken[j] && from[d0 + j] >= w.src && from[d0 + j] < w.src + 16) {
        w.index[j] = static_cast<uint8_t>(from[d0 + j] - w.src);
        taken[j] = true;
      }
    windows.push_back(w);
  } while (!std::all_of(taken, taken + bytes, [](bool t) { return t; }));
  return windows;
}

// The kernel of sets without one (kernel_set.h's gather_bytes), and of plans whose windows
// reach past the source: it reads only the bytes it moves.
void gather_bytes_portable(const ByteChunks& chunks, int64_t planes, const int8_t* src,
                           int64_t src_stride, int8_t* dst, int64_t dst_stride) {
  const size_t n = chunks.lanes.size() / 16;
  for (int64_t i = 0; i < planes; ++i) {
    const int8_t* in = src + i * src_stride;
    int8_t* out = dst + i * dst_stride;
    for (size_t c = 0; c < n; ++c) {
      const int32_t* from = chunks.lanes.data() + 16 * c;
      int8_t chunk[16];
      for (int j = 0; j < 16; ++j) chunk[j] = from[j] < 0 ? int8_t{0} : in[from[j]];
      std::memcpy(out + chunks.windows[c * static_cast<size_t>(chunks.per_chunk)].dst, chunk,
                  static_cast<size_t>(chunks.bytes));
    }
  }
}

}  // namespace

BytePlan plan_bytes(const std::vector<int64_t>& from, int64_t src_bytes) {
  const auto n = static_cast<int64_t>(from.size());
  ZT_ASSERT(n < (int64_t{1} << 31) && src_bytes < (int64_t{1} << 31));
  // The chunks (place, length) and their windows, then a group per length, its chunks padded
  // to the most windows any of them has.
  struct Chunk {
    int64_t d0;
    int bytes;
    std::vector<ByteWindow> windows;
  };
  std::vector<Chunk> chunks;
  for (int64_t d = 0; d < n;) {
    if (from[d] == kByteKept) {
      ++d;
      continue;
    }
    int64_t end = d;
    while (end < n && from[end] != kByteKept) ++end;
    const auto bytes = static_cast<int>(std::min<int64_t>(16, end - d));
    for (int64_t c = d; c < end; c += 16) {
      const int64_t at = std::min(c, end - bytes);
      chunks.push_back({at, bytes, plan_chunk(from, at, bytes)});
    }
    d = end;
  }
  BytePlan plan;
  plan.wide = src_bytes >= 16;
  auto group_of = [&](int bytes) -> ByteChunks& {
    for (ByteChunks& g : plan.groups)
      if (g.bytes == bytes) return g;
    return plan.groups.emplace_back(ByteChunks{0, bytes, {}, {}});
  };
  for (const Chunk& c : chunks) {
    ByteChunks& g = group_of(c.bytes);
    g.per_chunk = std::max(g.per_chunk, static_cast<int>(c.windows.size()));
  }
  for (const Chunk& c : chunks) {
    ByteChunks& g = group_of(c.bytes);
    g.windows.insert(g.windows.end(), c.windows.begin(), c.windows.end());
    g.windows.resize(g.windows.size() + static_cast<size_t>(g.per_chunk) - c.windows.size(),
                     empty_window());
    for (int j = 0; j < 16; ++j)
      g.lanes.push_back(j < c.bytes ? static_cast<int32_t>(std::max<int64_t>(-1, from[c.d0 + j]))
                                    : -1);
  }
  // What the kernels rely on: the lanes a window takes lie in the source, and a wide plan's
  // windows may be loaded whole.
  for (const ByteChunks& g : plan.groups)
    for (const ByteWindow& w : g.windows) {
      ZT_ASSERT(!plan.wide || w.src + 16 <= src_bytes);
      for (uint8_t i : w.index) ZT_ASSERT(i >= 16 || w.src + i < src_bytes);
    }
  return plan;
}

void gather_bytes(const BytePlan& plan, int64_t planes, const int8_t* src, int64_t src_stride,
                  int8_t* dst, int64_t dst_stride) {
  const auto fast = plan.wide ? active_kernels().gather_bytes : nullptr;
  for (const ByteChunks& g : plan.groups)
    (fast ? fast : gather_bytes_portable)(g, planes, src, src_stride, dst, dst_stride);
}

}  // namespace zotrain::kernels
