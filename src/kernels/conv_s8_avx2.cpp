// The AVX2 build of the x86 int8 convolution kernels of conv_s8_x86.h and depthwise_s8_x86.h
// (int8_x86_dot.h: int8_vnni.cpp is the AVX-512 VNNI build of the same source).
#if defined(__x86_64__)

#define ZT_S8_NS avx2
#define ZT_S8_TARGET "avx2"
#define ZT_S8_AVX_VNNI 0
#define ZT_S8_VNNI 0
#include "conv_s8_x86.h"
#include "depthwise_s8_x86.h"

#endif
