// Internal to src/kernels: the kernels that are compiled once per instruction set
// (simd_kernels.h), as a table of functions per set, and the choice of the active set.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/byte_gather.h"
#include "kernels/conv2d.h"
#include "kernels/isa.h"
#include "kernels/npu.h"
#include "zotrain/kernels/pool.h"

namespace zotrain::kernels {

struct KernelSet {
  KernelIsa isa;
  const char* gemm_name;
  void (*gemm)(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
               int64_t ldc);
  // What conv2d_forward runs, for `zotrain info`.
  const char* conv2d_name;
  int64_t (*conv2d_forward_work)(const Conv2dGeometry& g);
  void (*conv2d_forward)(const Conv2dGeometry& g, int64_t images, const float* x, const float* w,
                         const float* b, float* y, float* work);
  // conv2d_forward_batch (conv2d.h) of this set; null: 0 for every geometry.
  int64_t (*conv2d_forward_batch)(const Conv2dGeometry& g);
  // dw of output channels [o0, o1) for stride 1 (conv2d_backward_weight without db).
  int64_t (*conv2d_weight_grad_work)(const Conv2dGeometry& g);
  void (*conv2d_weight_grad)(const Conv2dGeometry& g, int64_t o0, int64_t o1, int64_t images,
                             const float* x, const float* dy, float* dw, float* work);
  // The vector loops of the depthwise 3x3 convolution (conv2d.cpp): out[q] = init + sum over
  // taps t of w[t] * in[q + off[t]], and sums[t] += sum over q of a[q] * in[q + off[t]] for 9
  // taps, q in [0, n) rounded up to whole vectors of at most kMaxLanes floats.
  void (*tap_sums)(int64_t n, int taps, const float* w, const int64_t* off, float init,
                   const float* in, float* out);
  void (*tap_dots)(int64_t n, const float* a, const int64_t* off, const float* in, float* sums);
  // tap_sums on kDepthwiseGroup channels at once, interleaved (position q's channels side by
  // side at in + q * kDepthwiseGroup, likewise w, init and out): out[q][c] = init[c] + sum over
  // taps t of w[t][c] * in[q + off[t]][c] for q in [0, n), each element by tap_sums's
  // operations. For small planes, where a vector of positions would be most of a plane.
  void (*tap_sums_interleaved)(int64_t n, int taps, const float* w, const int64_t* off,
                               const float* init, const float* in, float* out);
  // and tap_dots likewise: sums[t][c] += the sum tap_dots forms for channel c (each lane of its
  // vectors summing its positions in order, the lanes then added in order), for q in [0, n).
  void (*tap_dots_interleaved)(int64_t n, const float* a, const int64_t* off, const float* in,
                               float* sums);
  // max_pool2d_forward for 2x2 windows of stride 2.
  void (*max_pool_2x2)(const Pool2dGeometry& g, int64_t planes, const float* x, float* y);
  // and of int32 accumulators (max_pool2d_s32_forward), with `range` returning range_bits of
  // every element read: all of x when in_h and in_w are even (0 without).
  int (*max_pool_2x2_s32)(const Pool2dGeometry& g, int64_t planes, const int32_t* x, int32_t* y,
                          bool range);
  // max_pool2d_backward_relu for 2x2 windows of stride 2.
  void (*max_pool_2x2_backward_relu)(const Pool2dGeometry& g, int64_t planes, const float* x,
                                     const float* dy, float* dx, float cap);
  // What the int8 kernels below run, for `zotrain info`.
  const char* int8_name;
  // int8 convolution forward (conv2d_s8_forward, weights_key included) without patch matrices;
  // null in sets without one, which run patch matrices and gemm_s8.
  int64_t (*conv2d_s8_direct_work_bytes)(const Conv2dGeometry& g);
  void (*conv2d_s8_direct)(const Conv2dGeometry& g, int64_t images, const int8_t* x,
                           const int8_t* w, int32_t* y, void* work, uint64_t weights_key);
  // conv2d_s8_forward_max_pooled (int8.h) in one pass, for the geometries the first says it
  // takes; null in sets without it.
  bool (*conv2d_s8_direct_pools)(const Conv2dGeometry& g, const Pool2dGeometry& pool);
  void (*conv2d_s8_direct_max_pooled)(const Conv2dGeometry& g, const Pool2dGeometry& pool,
                                      int64_t images, const int8_t* x, const int8_t* w, int32_t* y,
                                      int32_t* ranges, void* work, uint64_t weights_key);
  // conv2d_s8_direct, or with `pool` conv2d_s8_direct_max_pooled, with the NPU kernels'
  // requantization in its epilogue: int8 [images, out_c, plane] (or pooled plane), for the
  // geometries the first says it takes; null in sets without it.
  bool (*conv2d_s8_direct_requantizes)(const Conv2dGeometry& g, const Pool2dGeometry* pool);
  void (*conv2d_s8_direct_requantized)(const Conv2dGeometry& g, const Pool2dGeometry* pool,
                                       int64_t images, const int8_t* x, const int8_t* w,
                                       const Requantization& rq, int8_t* y, void* work,
                                       uint64_t weights_key);
  // gemm_s8 for op(B) = B (the convolution's W · patches where no direct kernel runs, the
  // backward products); null in sets without one.
  void (*gemm_s8_nn)(bool trans_a, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                     const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc, bool accumulate);
  // linear_s8_forward (int8.h) with B packed into work, returning false (nothing done) where it
  // does not take the operands; null in sets without it.
  int64_t (*linear_s8_work_bytes)(int64_t n, int64_t k);
  bool (*linear_s8)(int64_t m, int64_t n, int64_t k, const int8_t* a, const int8_t* b, int32_t* c,
                    void* work, uint64_t weights_key);
  // and with the NPU kernels' requantization in its epilogue, int8 C; null in sets without it.
  bool (*linear_s8_requantized)(int64_t m, int64_t n, int64_t k, const int8_t* a, const int8_t* b,
                                const Requantization& rq, int8_t* c, void* work,
                                uint64_t weights_key);
  // gemm_s8 for op(A) = A, op(B) = B^T (the linear layers' forward); null in sets without one.
  void (*gemm_s8_nt)(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int8_t* b,
                     int64_t ldb, int32_t* c, int64_t ldc, bool accumulate);
  // int8 max pooling, 2x2 windows of stride 2, for out_w >= 4, and its backward; null in sets
  // without them.
  void (*max_pool_2x2_s8)(const Pool2dGeometry& g, int64_t planes, const int8_t* x, int8_t* y);
  void (*max_pool_2x2_s8_backward)(const Pool2dGeometry& g, int64_t planes, const int8_t* x,
                                   const int8_t* dy, int8_t* dx);
  // stage_s16, stage_s16_in_range and the int16 -> int8 rounding shift of finish_s16; null in
  // sets without them.
  int (*stage_s16)(const int32_t* acc, int64_t n, int16_t* stage);
  void (*stage_s16_in_range)(const int32_t* acc, int64_t n, int range, int16_t* stage);
  void (*round_shift_s16)(const int16_t* stage, int64_t n, int s, int8_t* out);
  // The NPU kernels' fixed-point requantization (npu.h), null in sets without them; lo and hi lie
  // in [-128, 127]. y[j] = clamp(requantize(acc[j] + bias, mult), lo, hi) for j < n:
  void (*requantize_s8)(int64_t n, const int32_t* acc, int32_t bias, FixedMultiplier mult,
                        int32_t lo, int32_t hi, int8_t* y);
  // the depthwise convolution's y[q] = clamp(requantize(bias + sum over taps t of w[t] *
  // in[q + off[t]], mult), lo, hi) for q in [0, n) rounded up to whole vectors of at most
  // kMaxDepthwiseLanes outputs (in and y have room), taps <= kMaxDepthwiseTaps;
  void (*depthwise_taps_s8)(int64_t n, int taps, const int8_t* w, const int64_t* off,
                            const int8_t* in, int32_t bias, FixedMultiplier mult, int32_t lo,
                            int32_t hi, int8_t* y);
  // and add_s8's steps y[i] = clamp(requantize(requantize(a[i], ma) + requantize(b[i], mb),
  // down), lo, hi) for i < n.
  void (*add_s8_steps)(int64_t n, const int8_t* a, FixedMultiplier ma, const int8_t* b,
                       FixedMultiplier mb, FixedMultiplier down, int32_t lo, int32_t hi, int8_t* y);
  // A group of a byte_gather.h plan whose windows may be loaded whole; null in sets without it.
  void (*gather_bytes)(const ByteChunks& chunks, int64_t planes, const int8_t* src,
                       int64_t src_stride, int8_t* dst, int64_t dst_stride);
  // quantize_s8 (npu.h) for scales in [2^-100, 2^100], null in sets without it.
  void (*quantize_s8)(const float* x, int64_t n, double scale, int8_t* y);
  // What the perturbation kernels run, for `zotrain info`; philox4x32_run for the blocks (or a
  // prefix of them), returning how many it ran; null in sets without one.
  const char* perturbation_name;
  int64_t (*philox4x32_run)(uint64_t j0, uint32_t c2, uint32_t c3, uint64_t key, int64_t blocks,
                            uint32_t* out);
  // gaussian_pairs on wider vectors than its 8-lane clones; null in sets without one.
  void (*gaussian_pairs)(int64_t pairs, const uint32_t* words, float* z);
};

// The widest vector of any set, in floats.
constexpr int64_t kMaxLanes = 16;
// Channels tap_sums_interleaved takes at once.
constexpr int64_t kDepthwiseGroup = 8;
// depthwise_taps_s8's widest vector, in outputs, and its most taps (a 7x7 kernel).
constexpr int64_t kMaxDepthwiseLanes = 16;
constexpr int kMaxDepthwiseTaps = 49;

extern const KernelSet kPortableKernels;
#if defined(__x86_64__)
extern const KernelSet kAvx2FmaKernels;
// `base` with the int8 convolution and A·Bᵀ of AVX-512 VNNI (int8_vnni.cpp), as set `isa`,
// its f32 GEMM named `gemm_name` (a string that lives as long as the program).
KernelSet with_vnni_int8(const KernelSet& base, KernelIsa isa, const char* gemm_name);
// `base` with the f32 GEMM, convolution forward, depthwise taps and pooling on 512-bit vectors
// (simd_avx512.cpp): the same bits as the AVX2 build.
KernelSet with_avx512_f32(const KernelSet& base);
// The set kAvx2FmaVnni: kAvx2FmaKernels with both.
const KernelSet& avx512_vnni_kernels();
// `base` with the int8 kernels of the AVX-VNNI build (int8_avxvnni.cpp), as set `isa`, its f32
// GEMM named `gemm_name`.
KernelSet with_avx_vnni_int8(const KernelSet& base, KernelIsa isa, const char* gemm_name);
#endif
#if defined(__aarch64__)
extern const KernelSet kNeonKernels;
// `base` with the int8 convolution and A·Bᵀ in the dot-product instructions (int8_dotprod.cpp),
// as set kNeonDotprod.
KernelSet with_dotprod_int8(const KernelSet& base);
#endif
#if defined(ZOTRAIN_HAVE_ONEDNN) && defined(__x86_64__)
// kAvx2FmaKernels, avx512_vnni_kernels() and kAvx2FmaKernels with the AVX-VNNI int8 kernels,
// with oneDNN's sgemm for the 1x1 convolutions.
const KernelSet& onednn_kernels();
const KernelSet& onednn_vnni_kernels();
const KernelSet& onednn_avx_vnni_kernels();
#endif

// Every set compiled in, supported by the CPU or not (for scratch sizes that serve them all).
std::vector<const KernelSet*> compiled_kernel_sets();

// The set of the active instruction set (isa.h).
const KernelSet& active_kernels();

}  // namespace zotrain::kernels
