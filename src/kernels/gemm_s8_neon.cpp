// The plain NEON build (ARMv8.0: smull + sadalp) of the AArch64 int8 kernels of gemm_s8_neon.h;
// int8_dotprod.cpp builds the same source with sdot.
#if defined(__aarch64__)

#include <arm_neon.h>

#include "neon.h"

#define ZT_S8_NS neon
#define ZT_S8_DOTPROD 0
#include "gemm_s8_neon.h"

#endif
