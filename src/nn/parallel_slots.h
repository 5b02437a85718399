// Internal to src/nn: parallel_for that also tells each block which workspace slice it owns.
#pragma once

#include <algorithm>
#include <functional>

#include "zotrain/nn/layer.h"

namespace zotrain {

// Splits [0, n) into at most ctx.threads() contiguous blocks and runs fn(slot, begin, end) on
// each, slot < ctx.threads() being distinct per block, so a block may use workspace slice
// `slot` without sharing it with another thread.
inline void parallel_slots(const ExecContext& ctx, int64_t n,
                           const std::function<void(int slot, int64_t begin, int64_t end)>& fn) {
  const int64_t parts = std::min<int64_t>(ctx.threads(), n);
  if (parts <= 1) {
    if (n > 0) fn(0, 0, n);
    return;
  }
  ctx.pool->run([&](int w) {
    if (w < parts) fn(w, n * w / parts, n * (w + 1) / parts);
  });
}

}  // namespace zotrain
