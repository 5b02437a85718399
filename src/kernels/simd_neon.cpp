// The NEON build of the tiled kernels for AArch64: the portable set's source on the same vectors
// of 4 floats, but with fused multiply-adds (fmla; the library is otherwise compiled without
// fusion, so that the portable set gives x86's bits), and the NEON int8 kernels
// (gemm_s8_neon.cpp).
#include "kernel_set.h"

#if defined(__aarch64__)

#include "neon.h"

#define ZT_SIMD_NS neon
#define ZT_SIMD_LANES 4
#include "simd_kernels.h"

namespace zotrain::kernels {

const KernelSet kNeonKernels = {
    .isa = KernelIsa::kNeon,
    .gemm_name = "neon 6x8 tiles (fmla)",
    .gemm = neon::gemm,
    .conv2d_name = "neon implicit-GEMM tiles (fmla)",
    .conv2d_forward_work = neon::conv2d_forward_work,
    .conv2d_forward = neon::conv2d_forward,
    .conv2d_forward_batch = nullptr,
    .conv2d_weight_grad_work = neon::conv2d_weight_grad_work,
    .conv2d_weight_grad = neon::conv2d_weight_grad,
    .tap_sums = neon::tap_sums,
    .tap_dots = neon::tap_dots,
    .tap_sums_interleaved = neon::tap_sums_interleaved,
    .tap_dots_interleaved = neon::tap_dots_interleaved,
    .max_pool_2x2 = neon::max_pool_2x2,
    .max_pool_2x2_s32 = neon::max_pool_2x2_s32,
    .max_pool_2x2_backward_relu = neon::max_pool_2x2_backward_relu,
    .int8_name =
        "neon: A.B 4x16 tiles (smlal by element; conv2d by patch matrices), A.B^T 3x4 dot tiles "
        "(smull + sadalp); the other int8 kernels portable",
    .conv2d_s8_direct_work_bytes = nullptr,
    .conv2d_s8_direct = nullptr,
    .conv2d_s8_direct_pools = nullptr,
    .conv2d_s8_direct_max_pooled = nullptr,
    .conv2d_s8_direct_requantizes = nullptr,
    .conv2d_s8_direct_requantized = nullptr,
    .gemm_s8_nn = neon::gemm_s8_nn,
    .linear_s8_work_bytes = nullptr,
    .linear_s8 = nullptr,
    .linear_s8_requantized = nullptr,
    .gemm_s8_nt = neon::gemm_s8_nt,
    .max_pool_2x2_s8 = nullptr,
    .max_pool_2x2_s8_backward = nullptr,
    .stage_s16 = nullptr,
    .stage_s16_in_range = nullptr,
    .round_shift_s16 = nullptr,
    .requantize_s8 = nullptr,
    .depthwise_taps_s8 = nullptr,
    .add_s8_steps = nullptr,
    .gather_bytes = neon::gather_bytes,
    .quantize_s8 = nullptr,
    .perturbation_name = "Philox 8 blocks at a time on 128 bits; Box-Muller on 4 lanes",
    .philox4x32_run = neon::philox4x32_run,
    .gaussian_pairs = nullptr,
};

}  // namespace zotrain::kernels

#endif
