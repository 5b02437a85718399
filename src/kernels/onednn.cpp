// The AVX2+FMA kernel set (and its AVX-512 twin) with oneDNN's sgemm for the 1x1, stride-1
// convolutions (MobileNetV2's pointwise layers), compiled only when CMake finds oneDNN. On those
// shapes the output of one image is a plain product W [out_c x in_c] * X [in_c x plane], where
// oneDNN's JIT GEMM runs about twice as fast as the implicit-GEMM tiles (docs/benchmarks.md).
// Everything else stays on the base set's kernels, including gemm_f32 and the weight gradient:
// oneDNN's sgemm rounds an element differently when a product is split into row or column blocks,
// and those are split over threads, while a convolution's images are not split inside an image, so
// results here still do not depend on the thread count. Planes of 16 pixels or fewer (MobileNetV2's
// last stages) take groups of images as one product instead of one each, which callers align
// (conv2d_forward_batch).
#include "kernel_set.h"

#if defined(ZOTRAIN_HAVE_ONEDNN) && defined(__x86_64__)

#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <string>

#include "zotrain/core/error.h"

namespace zotrain::kernels {

namespace {

bool pointwise(const Conv2dGeometry& g) {
  return g.k == 1 && g.stride == 1 && g.pad == 0;
}

// A pointwise product of one image has a column per pixel: on planes of kBatchedPlane pixels or
// fewer (4x4 and 2x2 in MobileNetV2 at 64x64) the weights, up to 1280 x 320 of them, are read
// for 16 or 4 columns. Those take kBatchColumns / plane images as one product, their planes
// gathered side by side in the scratch and the product scattered back (MobileNetV2 1.0 at 64x64,
// batch 32: the ZO step's pointwise products 1.9x faster, docs/benchmarks.md).
constexpr int64_t kBatchedPlane = 16;
constexpr int64_t kBatchColumns = 128;

int64_t batch_images(const Conv2dGeometry& g) {
  const int64_t plane = g.out_plane();
  return pointwise(g) && plane <= kBatchedPlane ? kBatchColumns / plane : 0;
}

// y = w x + b for `images` images gathered into one product of images * plane columns.
void batched_product(const Conv2dGeometry& g, int64_t images, const float* x, const float* w,
                     const float* b, float* y, float* work) {
  const int64_t plane = g.out_plane(), cols = images * plane;
  float* xs = work;                  // [in_c, cols]
  float* ys = work + g.in_c * cols;  // [out_c, cols]
  for (int64_t n = 0; n < images; ++n)
    for (int64_t c = 0; c < g.in_c; ++c)
      std::copy_n(x + n * g.in_numel() + c * plane, plane, xs + c * cols + n * plane);
  if (b)
    for (int64_t o = 0; o < g.out_c; ++o) std::fill(ys + o * cols, ys + (o + 1) * cols, b[o]);
  const dnnl_status_t status = dnnl_sgemm('N', 'N', g.out_c, cols, g.in_c, 1.0f, w, g.in_c, xs,
                                          cols, b ? 1.0f : 0.0f, ys, cols);
  ZT_ASSERT(status == dnnl_success);
  for (int64_t n = 0; n < images; ++n)
    for (int64_t o = 0; o < g.out_c; ++o)
      std::copy_n(ys + o * cols + n * plane, plane, y + n * g.out_numel() + o * plane);
}

// zotrain's own pool splits the work over threads; oneDNN (built on OpenMP in Debian) would
// otherwise start a team of its own inside every call.
void single_threaded_onednn() {
  thread_local const bool set = (omp_set_num_threads(1), true);
  (void)set;
}

// The set Base() with the pointwise convolutions in oneDNN.
template <const KernelSet& (*Base)()>
struct OnBase {
  static int64_t conv2d_forward_work(const Conv2dGeometry& g) {
    return pointwise(g) ? batch_images(g) * g.out_plane() * (g.in_c + g.out_c)
                        : Base().conv2d_forward_work(g);
  }

  static void conv2d_forward(const Conv2dGeometry& g, int64_t images, const float* x,
                             const float* w, const float* b, float* y, float* work) {
    if (!pointwise(g)) return Base().conv2d_forward(g, images, x, w, b, y, work);
    single_threaded_onednn();
    if (const int64_t batch = batch_images(g)) {
      for (int64_t n = 0; n < images; n += batch)
        batched_product(g, std::min(batch, images - n), x + n * g.in_numel(), w, b,
                        y + n * g.out_numel(), work);
      return;
    }
    const int64_t plane = g.out_plane();
    for (int64_t n = 0; n < images; ++n) {
      float* yn = y + n * g.out_numel();
      if (b)
        for (int64_t o = 0; o < g.out_c; ++o) std::fill(yn + o * plane, yn + (o + 1) * plane, b[o]);
      const dnnl_status_t status =
          dnnl_sgemm('N', 'N', g.out_c, plane, g.in_c, 1.0f, w, g.in_c, x + n * g.in_numel(), plane,
                     b ? 1.0f : 0.0f, yn, plane);
      ZT_ASSERT(status == dnnl_success);
    }
  }

  static KernelSet make(KernelIsa isa, const char* gemm_name) {
    KernelSet set = Base();
    set.isa = isa;
    set.gemm_name = gemm_name;
    const dnnl_version_t* v = dnnl_version();
    static const std::string conv_name =
        std::string(Base().conv2d_name) + "; 1x1 stride 1: oneDNN " + std::to_string(v->major) +
        "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
        " sgemm per image (planes of 16 or fewer pixels: per " + std::to_string(kBatchColumns) +
        " columns)";
    set.conv2d_name = conv_name.c_str();
    set.conv2d_forward_work = conv2d_forward_work;
    set.conv2d_forward = conv2d_forward;
    set.conv2d_forward_batch = batch_images;
    return set;
  }
};

const KernelSet& avx2_kernels() {
  return kAvx2FmaKernels;
}

}  // namespace

const KernelSet& onednn_kernels() {
  static const KernelSet set = OnBase<avx2_kernels>::make(
      KernelIsa::kAvx2FmaOnednn, "avx2+fma+onednn: the avx2+fma 6x16 tiles");
  return set;
}

const KernelSet& onednn_avx_vnni_kernels() {
  static const KernelSet set =
      with_avx_vnni_int8(onednn_kernels(), KernelIsa::kAvx2FmaOnednnAvxVnni,
                         "avx2+fma+onednn+avxvnni: the avx2+fma 6x16 tiles");
  return set;
}

const KernelSet& onednn_vnni_kernels() {
  static const KernelSet set = OnBase<avx512_vnni_kernels>::make(
      KernelIsa::kAvx2FmaOnednnVnni, "avx2+fma+onednn+vnni: avx-512 8x16 tiles");
  return set;
}

}  // namespace zotrain::kernels

#endif
