// The AVX2+FMA build of the tiled kernels: vectors of 8 floats and fused multiply-adds. Only the
// code of simd_kernels.h is compiled for AVX2 (kernel_set.h and what it includes come first,
// for the baseline), and the dispatcher calls it only on CPUs that have AVX2 and FMA.
#include "kernel_set.h"

#if defined(__x86_64__)

#include "int8_avx2.h"

#define ZT_SIMD_NS avx2
#define ZT_SIMD_LANES 8
#define ZT_SIMD_TARGET "avx2,fma"
#include "simd_kernels.h"

namespace zotrain::kernels {

const KernelSet kAvx2FmaKernels = {
    .isa = KernelIsa::kAvx2Fma,
    .gemm_name = "avx2+fma 6x16 tiles",
    .gemm = avx2::gemm,
    .conv2d_name = "avx2+fma implicit-GEMM tiles",
    .conv2d_forward_work = avx2::conv2d_forward_work,
    .conv2d_forward = avx2::conv2d_forward,
    .conv2d_forward_batch = nullptr,
    .conv2d_weight_grad_work = avx2::conv2d_weight_grad_work,
    .conv2d_weight_grad = avx2::conv2d_weight_grad,
    .tap_sums = avx2::tap_sums,
    .tap_dots = avx2::tap_dots,
    .tap_sums_interleaved = avx2::tap_sums_interleaved,
    .tap_dots_interleaved = avx2::tap_dots_interleaved,
    .max_pool_2x2 = avx2::max_pool_2x2,
    .max_pool_2x2_s32 = avx2::max_pool_2x2_s32,
    .max_pool_2x2_backward_relu = avx2::max_pool_2x2_backward_relu,
    .int8_name =
        "avx2: conv2d direct 6x16 tiles, linear forward 4x16 tiles (u8 x s8 vpmaddubsw on "
        "nonnegative rows shorter than 256), A.B^T 3x4 dot tiles (vpmaddubsw where an operand is "
        "nonnegative), A.B 4x16 tiles (vpmaddwd), the NPU depthwise taps (vpmaddubsw in quads "
        "along kernel rows at stride 1 on nonnegative inputs, else vpmaddwd), 2x2 max pool, "
        "requantization, Philox x8",
    .conv2d_s8_direct_work_bytes = avx2::conv2d_s8_direct_work_bytes,
    .conv2d_s8_direct = avx2::conv2d_s8_direct,
    .conv2d_s8_direct_pools = avx2::conv2d_s8_direct_pools,
    .conv2d_s8_direct_max_pooled = avx2::conv2d_s8_direct_max_pooled,
    .conv2d_s8_direct_requantizes = nullptr,
    .conv2d_s8_direct_requantized = nullptr,
    .gemm_s8_nn = avx2::gemm_s8_nn,
    .linear_s8_work_bytes = avx2::linear_s8_work_bytes,
    .linear_s8 = avx2::linear_s8,
    .linear_s8_requantized = nullptr,
    .gemm_s8_nt = avx2::gemm_s8_nt,
    .max_pool_2x2_s8 = avx2::max_pool_2x2_s8,
    .max_pool_2x2_s8_backward = avx2::max_pool_2x2_s8_backward,
    .stage_s16 = avx2::stage_s16,
    .stage_s16_in_range = avx2::stage_s16_in_range,
    .round_shift_s16 = avx2::round_shift_s16,
    .requantize_s8 = avx2::requantize_s8,
    .depthwise_taps_s8 = avx2::depthwise_taps_s8,
    .add_s8_steps = avx2::add_s8_steps,
    .gather_bytes = avx2::gather_bytes,
    .quantize_s8 = avx2::quantize_s8,
    .perturbation_name = "Philox 8 blocks at a time on 256 bits; Box-Muller on 8 lanes",
    .philox4x32_run = avx2::philox4x32_run,
    .gaussian_pairs = nullptr,
};

}  // namespace zotrain::kernels

#endif
