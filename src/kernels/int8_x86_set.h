// Internal to src/kernels: an x86 int8 build (int8_x86_dot.h: ZT_S8_NS) as a kernel set made from
// a base set: its convolution, depthwise taps and A·B / A·Bᵀ kernels (conv_s8_x86.h,
// depthwise_s8_x86.h, gemm_s8_rows_x86.h, gemm_s8_x86.h). Included by int8_vnni.cpp and
// int8_avxvnni.cpp.
#pragma once

#include "conv_s8_x86.h"
#include "depthwise_s8_x86.h"
#include "gemm_s8_rows_x86.h"
#include "gemm_s8_x86.h"
#include "kernel_set.h"

namespace zotrain::kernels::ZT_S8_NS {

// `base` as set `isa`, its f32 GEMM named `gemm_name` and its int8 kernels `int8_name` (strings
// that live as long as the program), with this build's int8 kernels.
inline KernelSet with_int8_build(const KernelSet& base, KernelIsa isa, const char* gemm_name,
                                 const char* int8_name) {
  KernelSet set = base;
  set.isa = isa;
  set.gemm_name = gemm_name;
  set.int8_name = int8_name;
  set.conv2d_s8_direct_work_bytes = conv2d_s8_direct_work_bytes;
  set.conv2d_s8_direct = conv2d_s8_direct;
  set.conv2d_s8_direct_pools = conv2d_s8_direct_pools;
  set.conv2d_s8_direct_max_pooled = conv2d_s8_direct_max_pooled;
  set.gemm_s8_nn = gemm_s8_nn;
  set.linear_s8_work_bytes = linear_s8_work_bytes;
  set.linear_s8 = linear_s8;
  set.gemm_s8_nt = gemm_s8_nt;
  set.depthwise_taps_s8 = depthwise_taps_s8;
  return set;
}

}  // namespace zotrain::kernels::ZT_S8_NS
