// Internal to src/kernels: ZT_CLONES compiles a function twice on x86-64, for AVX2 and for
// the baseline, and picks one when the program loads: for plain loops the compiler vectorizes,
// which then run on 8 floats (4 doubles) at a time instead of SSE2's 4 (2). Not in the
// floating-point-free check build (see CMakeLists.txt), which disables the vector registers.
#pragma once

#if defined(__x86_64__) && !defined(ZOTRAIN_NO_FLOAT_CHECK)
#define ZT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ZT_CLONES
#endif
