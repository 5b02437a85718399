// The ARMv8.2 dot-product build (sdot) of the AArch64 int8 kernels of gemm_s8_neon.h, the
// source the plain NEON build (gemm_s8_neon.cpp) compiles, and the kernel set that uses it. Only
// the code of gemm_s8_neon.h is compiled for the extension; the dispatcher calls it only on CPUs
// whose kernel reports it (HWCAP_ASIMDDP).
#if defined(__aarch64__)

#include <arm_neon.h>

#include "kernel_set.h"
#include "neon.h"

#pragma GCC push_options
#pragma GCC target("arch=armv8.2-a+dotprod")
#define ZT_S8_NS neon_dotprod
#define ZT_S8_DOTPROD 1
#include "gemm_s8_neon.h"
#pragma GCC pop_options

namespace zotrain::kernels {

KernelSet with_dotprod_int8(const KernelSet& base) {
  KernelSet set = base;
  set.isa = KernelIsa::kNeonDotprod;
  set.gemm_name = "neon+dotprod: the neon 6x8 tiles (fmla)";
  set.int8_name =
      "neon+dotprod: A.B 4x16 tiles (smlal by element; conv2d by patch matrices), A.B^T 3x4 dot "
      "tiles (sdot); the other int8 kernels portable";
  set.gemm_s8_nt = neon_dotprod::gemm_s8_nt;
  return set;
}

}  // namespace zotrain::kernels

#endif
