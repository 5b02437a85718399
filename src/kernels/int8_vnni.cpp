// The AVX-512 VNNI build (vpdpwssd, vpdpbusd; on 256-bit registers but for the convolution in
// quads and the unsigned A·Bᵀ tiles, on 512) of the x86 int8 convolution, the NPU depthwise taps
// and A·Bᵀ, from the source the AVX2 build compiles (int8_x86_dot.h).
#if defined(__x86_64__)

#define ZT_S8_NS vnni
#define ZT_S8_TARGET "avx2,avx512f,avx512vl,avx512bw,avx512vnni"
#define ZT_S8_AVX_VNNI 0
#define ZT_S8_VNNI 1
#include "int8_x86_set.h"
#include "kernels/gaussian.h"

namespace zotrain::kernels {

KernelSet with_vnni_int8(const KernelSet& base, KernelIsa isa, const char* gemm_name) {
  KernelSet set = vnni::with_int8_build(
      base, isa, gemm_name,
      "avx512-vnni: conv2d direct 6x16 tiles (vpdpwssd), in quads (vpdpbusd) on 512 bits: "
      "channel rows 6x64 on an image expanded into windows, pixel rows 12x16 (with 2x2 max pooling "
      "or the NPU requantization fused); A.B^T 3x4 dot tiles "
      "(vpdpbusd on 512 bits where an operand is nonnegative), A.B 4x16 tiles (vpdpwssd), the NPU "
      "requantization, the int8 staging and rounding shift on 512 bits, the NPU depthwise taps by "
      "vpdpbusd in quads along kernel rows at stride 1 on nonnegative inputs, else vpdpwssd, the "
      "other int8 kernels "
      "avx2's");
  set.conv2d_s8_direct_requantizes = vnni::conv2d_s8_direct_requantizes;
  set.conv2d_s8_direct_requantized = vnni::conv2d_s8_direct_requantized;
  set.linear_s8_requantized = vnni::linear_s8_requantized;
  // The sets that need AVX-512 VL and VNNI have AVX-512F: the perturbations' words and Gaussian
  // values on 512 bits.
  set.perturbation_name =
      "Philox 16 blocks at a time on 512 bits; Box-Muller on 16 lanes (avx-512)";
  set.philox4x32_run = avx512::philox4x32_run;
  set.requantize_s8 = avx512::requantize_s8;
  set.add_s8_steps = avx512::add_s8_steps;
  set.stage_s16 = avx512::stage_s16;
  set.stage_s16_in_range = avx512::stage_s16_in_range;
  set.round_shift_s16 = avx512::round_shift_s16;
  set.gaussian_pairs = avx512::gaussian_pairs;
  return set;
}

}  // namespace zotrain::kernels

#endif
