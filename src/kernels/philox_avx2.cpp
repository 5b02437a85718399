// Philox-4x32-10 on 256-bit registers (philox_x86.h), for the AVX2 kernel sets.
#include "int8_avx2.h"

#if defined(__x86_64__)

#define ZT_PHILOX_NS avx2
#define ZT_PHILOX_TARGET "avx2"
#define ZT_PHILOX_BITS 256
#include "philox_x86.h"

#endif
