// Internal to src/nn/int8: the integer layers, one file each, built by make_qlayer.
#pragma once

#include <memory>

#include "kernels/int8.h"
#include "zotrain/nn/int8/qlayer.h"

namespace zotrain::int8 {

std::unique_ptr<QLayer> make_linear(int64_t in_features, int64_t out_features);
std::unique_ptr<QLayer> make_conv2d(const Shape& in, const LayerSpec& spec);
std::unique_ptr<QLayer> make_relu();
std::unique_ptr<QLayer> make_max_pool2d(int64_t kernel, int64_t stride, int64_t pad);
std::unique_ptr<QLayer> make_flatten();
std::unique_ptr<QLayer> make_global_max_pool();
std::unique_ptr<QLayer> make_dropout(uint32_t drop_below);
std::unique_ptr<QLayer> make_batch_norm(const Shape& in);

// Activations and errors go back to int8 with round-to-nearest shifts (NITI's RoundShift).
inline constexpr int kMantissaBits = 7;

// Runs rows(r0, r1, acc, work) for blocks [r0, r1) of up to `block` batch rows, which writes those
// rows' n int32 accumulators each into acc, and brings the whole [rows, n] result to int8 (round
// to nearest, one exponent): the requantization of the whole tensor without int32 storage for
// it. Returns the shift. The blocks run on ctx.pool's workers, each with its own accumulators
// and kernel scratch `work`; every row's result is the same whichever worker computes it.
// With `pool`, each row (`planes` planes) is max-pooled in int32, into the worker's accumulators
// after the block's, before it is staged, and `out` gets the pooled rows: the pooling of what
// `out` would get without, bit for bit, because every rounding is monotone and the row's range
// (which sets the shifts) is still taken before the pooling. With `fused`, rows(...) pools
// itself: it writes the block's pooled rows into acc and their ranges into ctx.ranges.
struct RowPooling {
  kernels::Pool2dGeometry g;
  int64_t planes;
  bool fused = false;
};
template <typename RowsFn>
int requantize_rows(int64_t rows, int64_t n, int64_t block, const QExecContext& ctx, int8_t* out,
                    RowsFn fn, const RowPooling* pool = nullptr) {
  const int64_t staged = pool ? pool->planes * pool->g.out_plane() : n;
  parallel_for(ctx.pool, (rows + block - 1) / block, [&](int slot, int64_t b0, int64_t b1) {
    int32_t* acc = ctx.acc + slot * ctx.acc_stride;
    void* work = static_cast<char*>(ctx.work) + slot * ctx.work_stride;
    for (int64_t r0 = b0 * block; r0 < b1 * block && r0 < rows; r0 += block) {
      const int64_t r1 = r0 + block < rows ? r0 + block : rows;
      fn(r0, r1, acc, work);
      for (int64_t r = r0; r < r1; ++r) {
        const int32_t* row = acc + (r - r0) * n;
        int16_t* stage = ctx.stage + r * staged;
        if (!pool) {
          ctx.ranges[r] = kernels::stage_s16(row, n, stage);
          continue;
        }
        if (pool->fused) {
          kernels::stage_s16_in_range(acc + (r - r0) * staged, staged, ctx.ranges[r], stage);
          continue;
        }
        int32_t* pooled = acc + block * n;
        ctx.ranges[r] = kernels::max_pool2d_s32_forward(pool->g, pool->planes, row, pooled);
        kernels::stage_s16_in_range(pooled, staged, ctx.ranges[r], stage);
      }
    }
  });
  int floor = 0;
  if (ctx.all_ranks_range) {
    for (int64_t r = 0; r < rows; ++r) floor = ctx.ranges[r] > floor ? ctx.ranges[r] : floor;
    floor = ctx.all_ranks_range(floor);
  }
  return kernels::finish_s16(ctx.stage, staged, rows, ctx.ranges, kMantissaBits, out, floor);
}

}  // namespace zotrain::int8
