// Philox-4x32-10 on 512-bit registers (philox_x86.h), for the kernel sets that require
// AVX-512 (the "+vnni" ones: with_vnni_int8).
#include "int8_avx2.h"

#if defined(__x86_64__)

#define ZT_PHILOX_NS avx512
#define ZT_PHILOX_TARGET "avx512f"
#define ZT_PHILOX_BITS 512
#include "philox_x86.h"

#endif
