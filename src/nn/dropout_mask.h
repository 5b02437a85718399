// Which elements a dropout pass drops: a pure function of the pass's key and the element's index
// (Philox), so no mask is stored and every pass with the key sees the same one. Integer only: the
// f32 and the int8 dropout layers share it.
#pragma once

#include <cstdint>

#include "zotrain/core/rng.h"

namespace zotrain {

// Element i of a pass keyed `key` is dropped when its Philox word is below `drop_below`
// (rate * 2^32). Calls keep(i, kept) for i in [begin, end); integer only, shared with the int8
// layer.
template <typename Keep>
void for_each_dropout_element(uint64_t key, uint32_t drop_below, int64_t begin, int64_t end,
                              Keep keep) {
  for (int64_t block = begin / 4; block * 4 < end; ++block) {
    const auto b = static_cast<uint64_t>(block);
    const Philox4x32 words =
        philox4x32({static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), 0, 0}, key);
    for (int64_t k = 0; k < 4; ++k) {
      const int64_t i = block * 4 + k;
      if (i >= begin && i < end) keep(i, words[k] >= drop_below);
    }
  }
}

}  // namespace zotrain
