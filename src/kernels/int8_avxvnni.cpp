// The AVX-VNNI build (the VEX vpdpwssd and vpdpbusd on 256 bits: CPUs with AVX-VNNI, with or
// without AVX-512) of the x86 int8 convolution, the NPU depthwise taps and A·Bᵀ, from the source
// the AVX2 build compiles (int8_x86_dot.h): every layout, tile and plan is AVX2's, and each
// dot-product step is one instruction in place of two (vpmaddwd + vpaddd) or three (vpmaddubsw
// + vpmaddwd + vpaddd), giving the same exact sums.
#if defined(__x86_64__)

#define ZT_S8_NS avxvnni
#define ZT_S8_TARGET "avx2,avxvnni"
#define ZT_S8_AVX_VNNI 1
#define ZT_S8_VNNI 0
#include "int8_x86_set.h"

namespace zotrain::kernels {

KernelSet with_avx_vnni_int8(const KernelSet& base, KernelIsa isa, const char* gemm_name) {
  return avxvnni::with_int8_build(
      base, isa, gemm_name,
      "avx-vnni: the avx2 int8 kernels (conv2d direct 6x16 tiles, linear forward 4x16 tiles, "
      "A.B^T 3x4 dot tiles, A.B 4x16 tiles, the NPU depthwise taps) with vpdpwssd and vpdpbusd on "
      "256 bits in place of vpmaddwd + vpaddd and vpmaddubsw + vpmaddwd + vpaddd; the other int8 "
      "kernels avx2's");
}

}  // namespace zotrain::kernels

#endif
