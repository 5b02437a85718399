// The portable build of the tiled kernels: vectors of 4 floats, which GCC lowers to SSE on
// x86-64, NEON on AArch64 and scalar code on targets without SIMD.
#include "kernel_set.h"

#define ZT_SIMD_NS portable
#define ZT_SIMD_LANES 4
#include "simd_kernels.h"

namespace zotrain::kernels {

const KernelSet kPortableKernels = {
    .isa = KernelIsa::kPortable,
    .gemm_name = "portable 6x8 tiles",
    .gemm = portable::gemm,
    .conv2d_name = "portable implicit-GEMM tiles",
    .conv2d_forward_work = portable::conv2d_forward_work,
    .conv2d_forward = portable::conv2d_forward,
    .conv2d_forward_batch = nullptr,
    .conv2d_weight_grad_work = portable::conv2d_weight_grad_work,
    .conv2d_weight_grad = portable::conv2d_weight_grad,
    .tap_sums = portable::tap_sums,
    .tap_dots = portable::tap_dots,
    .tap_sums_interleaved = portable::tap_sums_interleaved,
    .tap_dots_interleaved = portable::tap_dots_interleaved,
    .max_pool_2x2 = portable::max_pool_2x2,
    .max_pool_2x2_s32 = portable::max_pool_2x2_s32,
    .max_pool_2x2_backward_relu = portable::max_pool_2x2_backward_relu,
    .int8_name = "portable: conv2d by int8 patch matrices + gemm_s8 (auto-vectorized)",
    .conv2d_s8_direct_work_bytes = nullptr,
    .conv2d_s8_direct = nullptr,
    .conv2d_s8_direct_pools = nullptr,
    .conv2d_s8_direct_max_pooled = nullptr,
    .conv2d_s8_direct_requantizes = nullptr,
    .conv2d_s8_direct_requantized = nullptr,
    .gemm_s8_nn = nullptr,
    .linear_s8_work_bytes = nullptr,
    .linear_s8 = nullptr,
    .linear_s8_requantized = nullptr,
    .gemm_s8_nt = nullptr,
    .max_pool_2x2_s8 = nullptr,
    .max_pool_2x2_s8_backward = nullptr,
    .stage_s16 = nullptr,
    .stage_s16_in_range = nullptr,
    .round_shift_s16 = nullptr,
    .requantize_s8 = nullptr,
    .depthwise_taps_s8 = nullptr,
    .add_s8_steps = nullptr,
    .gather_bytes = nullptr,
    .quantize_s8 = nullptr,
    .perturbation_name =
        "Philox one block at a time; Box-Muller on 8 lanes on x86-64 (the avx2 clone on avx2 "
        "cpus), on 4 elsewhere",
    .philox4x32_run = nullptr,
    .gaussian_pairs = nullptr,
};

}  // namespace zotrain::kernels
