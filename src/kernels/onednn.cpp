// The AVX2+FMA kernel set (and its AVX-512 twin) with oneDNN's sgemm for the 1x1, stride-1
// convolutions (MobileNetV2's pointwise layers), compiled only when CMake finds oneDNN. On those
// shapes the output of one image is a plain product W [out_c x in_c] * X [in_c x plane], where
// oneDNN's JIT GEMM runs about twice as fast as the implicit-GEMM tiles (docs/benchmarks.md).
// Everything else stays on the base set's kernels, including gemm_f32 and the weight gradient:
// oneDNN's sgemm rounds an element differently when a product is split into row or column blocks,
// and those are split over threads, while a convolution's images are not split inside an image, so
// results here still do not depend on the thread count.
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
    return pointwise(g) ? 0 : Base().conv2d_forward_work(g);
  }

  static void conv2d_forward(const Conv2dGeometry& g, int64_t images, const float* x,
                             const float* w, const float* b, float* y, float* work) {
    if (!pointwise(g)) return Base().conv2d_forward(g, images, x, w, b, y, work);
    single_threaded_onednn();
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
        "." + std::to_string(v->minor) + "." + std::to_string(v->patch) + " sgemm per image";
    set.conv2d_name = conv_name.c_str();
    set.conv2d_forward_work = conv2d_forward_work;
    set.conv2d_forward = conv2d_forward;
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

const KernelSet& onednn_vnni_kernels() {
  static const KernelSet set = OnBase<avx512_vnni_kernels>::make(
      KernelIsa::kAvx2FmaOnednnVnni, "avx2+fma+onednn+vnni: avx-512 8x16 tiles");
  return set;
}

}  // namespace zotrain::kernels

#endif
