// Internal to src/kernels: function attributes of the AVX2 kernels, which the dispatcher
// (kernel_set.h) calls only on CPUs with AVX2. Every function of those files that uses vector
// intrinsics carries one, and calls only functions that do too (or none).
#pragma once

#define ZT_AVX2 __attribute__((target("avx2")))
#define ZT_AVX2_INLINE inline __attribute__((always_inline, target("avx2")))
