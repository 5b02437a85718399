// The AVX-512 build of the tiled f32 kernels: vectors of 16 floats and fused multiply-adds, the
// source of the AVX2 build (simd_kernels.h) at twice the lanes, for the "+vnni" kernel sets (the
// CPUs with AVX-512 VL and VNNI). Every element of a product or a convolution's output is its
// own chain of fused multiply-adds in reduction order, whatever the lanes and tiles, so these
// give the AVX2 build's bits; the kernels whose results depend on the lanes (the weight
// gradient's and the depthwise weight gradient's lane sums) stay on the AVX2 build, so that an
// f32 run gives the same bits in both sets.
#include "kernel_set.h"

#if defined(__x86_64__)

#define ZT_SIMD_NS avx512
#define ZT_SIMD_LANES 16
#define ZT_SIMD_TARGET "avx2,fma,avx512f,avx512vl"
#include "simd_kernels.h"

namespace zotrain::kernels {

KernelSet with_avx512_f32(const KernelSet& base) {
  KernelSet set = base;
  set.gemm = avx512::gemm;
  set.conv2d_name = "avx-512 implicit-GEMM tiles (8 x 16)";
  set.conv2d_forward_work = avx512::conv2d_forward_work;
  set.conv2d_forward = avx512::conv2d_forward;
  set.tap_sums = avx512::tap_sums;
  set.max_pool_2x2 = avx512::max_pool_2x2;
  set.max_pool_2x2_s32 = avx512::max_pool_2x2_s32;
  set.max_pool_2x2_backward_relu = avx512::max_pool_2x2_backward_relu;
  return set;
}

}  // namespace zotrain::kernels

#endif
