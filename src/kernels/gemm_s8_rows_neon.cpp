// gemm_s8's C (+)= op(A) · B (B not transposed: the convolution's weights times patch matrix,
// and the backward products) on NEON, for the AArch64 kernel sets. Register tiles of up to 4
// rows of C by 16 columns held in 16 int32 vectors over a block of k; each step widens one row of
// B to int16 (sxtl) and multiplies it by the four rows' A elements (smlal by element). int8
// products summed in int32 are exact in any order, so the portable loop's bits.
#if defined(__aarch64__)

#include <arm_neon.h>

#include <type_traits>

#include "neon.h"

namespace zotrain::kernels::neon {

namespace {

constexpr int kRows = 4;      // rows of C a tile
constexpr int64_t kKc = 512;  // k a block: the block's A elements, packed, stay in L1

#define ZT_NEON_INLINE inline __attribute__((always_inline))

// Row I and those after it of the tile: acc[i] += B's row bw times A element a[i] (smlal and
// smlal2 by element; the lane must be a constant).
template <int I, int RA, int NV>
ZT_NEON_INLINE void mac_rows(int16x4_t a, const int16x8_t (&bw)[NV], int32x4_t (&acc)[RA][2 * NV]) {
  if constexpr (I < RA) {
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      acc[I][2 * v] = vmlal_lane_s16(acc[I][2 * v], vget_low_s16(bw[v]), a, I);
      acc[I][2 * v + 1] = vmlal_high_lane_s16(acc[I][2 * v + 1], bw[v], a, I);
    }
    mac_rows<I + 1, RA, NV>(a, bw, acc);
  }
}

// acc (+)= the tile's products over the block's kc steps: pa holds 4 int16 A elements a step
// (rows past the tile zero), b the block's first row of B at the tile's first column. NV
// vectors of 8 columns.
template <int RA, int NV>
ZT_NEON_INLINE void tile_block(int64_t kc, const int16_t* pa, const int8_t* b, int64_t ldb,
                               int32x4_t (&acc)[RA][2 * NV]) {
  for (int64_t p = 0; p < kc; ++p, b += ldb) {
    const int16x4_t a = vld1_s16(pa + kRows * p);
    // Zero rows of A (ReLU-sparse gradients) add nothing: skip the step.
    if (vget_lane_u64(vreinterpret_u64_s16(a), 0) == 0) continue;
    int16x8_t bw[NV];
    if constexpr (NV == 2) {
      const int8x16_t bv = vld1q_s8(b);
      bw[0] = vmovl_s8(vget_low_s8(bv));
      bw[1] = vmovl_high_s8(bv);
    } else {
      bw[0] = vmovl_s8(vld1_s8(b));
    }
    mac_rows<0, RA, NV>(a, bw, acc);
  }
}

// Rows [i0, i0 + RA) of C, columns [0, n), over the k block [p0, p0 + kc) whose A elements are
// packed in pa; first: the block that starts the sum (C is overwritten unless accumulate).
template <int RA>
void rows_block(int64_t i0, int64_t n, int64_t p0, int64_t kc, const int16_t* pa, const int8_t* b,
                int64_t ldb, int32_t* c, int64_t ldc, bool load_c) {
  const int8_t* bk = b + p0 * ldb;
  int64_t j = 0;
  auto run = [&](auto nv) {
    constexpr int NV = decltype(nv)::value;
    int32x4_t acc[RA][2 * NV];
    for (int i = 0; i < RA; ++i)
      for (int v = 0; v < 2 * NV; ++v)
        acc[i][v] = load_c ? vld1q_s32(c + (i0 + i) * ldc + j + 4 * v) : vdupq_n_s32(0);
    tile_block<RA, NV>(kc, pa, bk + j, ldb, acc);
    for (int i = 0; i < RA; ++i)
      for (int v = 0; v < 2 * NV; ++v) vst1q_s32(c + (i0 + i) * ldc + j + 4 * v, acc[i][v]);
  };
  for (; j + 16 <= n; j += 16) run(std::integral_constant<int, 2>{});
  if (j + 8 <= n) run(std::integral_constant<int, 1>{}), j += 8;
  for (; j < n; ++j)
    for (int i = 0; i < RA; ++i) {
      int32_t sum = load_c ? c[(i0 + i) * ldc + j] : 0;
      for (int64_t p = 0; p < kc; ++p) sum += pa[kRows * p + i] * bk[p * ldb + j];
      c[(i0 + i) * ldc + j] = sum;
    }
}

}  // namespace

void gemm_s8_nn(bool trans_a, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc, bool accumulate) {
  int16_t pa[kRows * kKc];
  for (int64_t i0 = 0; i0 < m; i0 += kRows) {
    const int rows = static_cast<int>(m - i0 < kRows ? m - i0 : kRows);
    if (k == 0 && !accumulate)
      for (int i = 0; i < rows; ++i)
        for (int64_t j = 0; j < n; ++j) c[(i0 + i) * ldc + j] = 0;
    for (int64_t p0 = 0; p0 < k; p0 += kKc) {
      const int64_t kc = k - p0 < kKc ? k - p0 : kKc;
      for (int64_t p = 0; p < kc; ++p)
        for (int i = 0; i < kRows; ++i)
          pa[kRows * p + i] =
              i < rows ? (trans_a ? a[(p0 + p) * lda + i0 + i] : a[(i0 + i) * lda + p0 + p]) : 0;
      const bool load_c = accumulate || p0 > 0;
      switch (rows) {
        case 4:
          rows_block<4>(i0, n, p0, kc, pa, b, ldb, c, ldc, load_c);
          break;
        case 3:
          rows_block<3>(i0, n, p0, kc, pa, b, ldb, c, ldc, load_c);
          break;
        case 2:
          rows_block<2>(i0, n, p0, kc, pa, b, ldb, c, ldc, load_c);
          break;
        default:
          rows_block<1>(i0, n, p0, kc, pa, b, ldb, c, ldc, load_c);
          break;
      }
    }
  }
}

}  // namespace zotrain::kernels::neon

#endif
