// Internal to src/nn/int8: the integer layers, one file each, built by make_qlayer.
#pragma once

#include <memory>

#include "zotrain/kernels/int8.h"
#include "zotrain/nn/int8/qlayer.h"

namespace zotrain::int8 {

std::unique_ptr<QLayer> make_linear(int64_t in_features, int64_t out_features);
std::unique_ptr<QLayer> make_conv2d(const Shape& in, const LayerSpec& spec);
std::unique_ptr<QLayer> make_relu();
std::unique_ptr<QLayer> make_max_pool2d(int64_t kernel, int64_t stride);
std::unique_ptr<QLayer> make_flatten();
std::unique_ptr<QLayer> make_global_max_pool();
std::unique_ptr<QLayer> make_dropout(uint32_t drop_below);

// Activations and errors go back to int8 with round-to-nearest shifts (NITI's RoundShift).
inline constexpr int kMantissaBits = 7;

// Runs rows(r0, r1, acc, work) for blocks [r0, r1) of up to `block` batch rows, which writes those
// rows' n int32 accumulators each into acc, and brings the whole [rows, n] result to int8 (round
// to nearest, one exponent): the requantization of the whole tensor without int32 storage for
// it. Returns the shift. The blocks run on ctx.pool's workers, each with its own accumulators
// and kernel scratch `work`; every row's result is the same whichever worker computes it.
template <typename RowsFn>
int requantize_rows(int64_t rows, int64_t n, int64_t block, const QExecContext& ctx, int8_t* out,
                    RowsFn fn) {
  parallel_for(ctx.pool, (rows + block - 1) / block, [&](int slot, int64_t b0, int64_t b1) {
    int32_t* acc = ctx.acc + slot * ctx.acc_stride;
    void* work = static_cast<char*>(ctx.work) + slot * ctx.work_stride;
    for (int64_t r0 = b0 * block; r0 < b1 * block && r0 < rows; r0 += block) {
      const int64_t r1 = r0 + block < rows ? r0 + block : rows;
      fn(r0, r1, acc, work);
      for (int64_t r = r0; r < r1; ++r)
        ctx.ranges[r] = kernels::stage_s16(acc + (r - r0) * n, n, ctx.stage + r * n);
    }
  });
  return kernels::finish_s16(ctx.stage, n, rows, ctx.ranges, kMantissaBits, out);
}

}  // namespace zotrain::int8
