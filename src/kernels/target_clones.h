// Internal to src/kernels: ZT_INT8_CLONES compiles a function twice on x86-64, for AVX2 and for
// the baseline, and picks one when the program loads. Not in the floating-point-free check
// build (see CMakeLists.txt), which disables the vector registers.
#pragma once

#if defined(__x86_64__) && !defined(ZOTRAIN_NO_FLOAT_CHECK)
#define ZT_INT8_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ZT_INT8_CLONES
#endif
