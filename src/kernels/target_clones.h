// Internal to src/kernels: ZT_CLONES compiles a function twice on x86-64, for AVX2 and for
// the baseline, and picks one when the program loads: for plain loops the compiler vectorizes,
// which then run on 8 floats (4 doubles) at a time instead of SSE2's 4 (2). ZT_CLONES_512 adds
// a clone for x86-64-v4 (AVX-512): batch norm's double-precision loops, bound by their
// arithmetic, gain from 8 doubles a vector (MobileNetV2:0.35 steps 4-5 %, docs/benchmarks.md).
// Every clone does the same arithmetic in the same order (no contraction: -ffp-contract=off),
// so the same bits. Not in the floating-point-free check build (see CMakeLists.txt), which
// disables the vector registers.
#pragma once

#if defined(__x86_64__) && !defined(ZOTRAIN_NO_FLOAT_CHECK)
#define ZT_CLONES __attribute__((target_clones("avx2", "default")))
#define ZT_CLONES_512 __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define ZT_CLONES
#define ZT_CLONES_512
#endif
