// Chooses the kernel set at the first kernel call: AVX2+FMA where the CPU (and OS) support it,
// else the portable build.
#include <atomic>

#include "kernel_set.h"
#include "zotrain/core/error.h"
#include "zotrain/kernels/gemm.h"

namespace zotrain::kernels {

namespace {

const KernelSet& kernels_for(KernelIsa isa) {
#if defined(__x86_64__)
  if (isa == KernelIsa::kAvx2Fma) return kAvx2FmaKernels;
#endif
  (void)isa;
  return kPortableKernels;
}

// Null until the first kernel call or set_active_kernel_isa.
std::atomic<const KernelSet*> active{nullptr};

}  // namespace

bool kernel_isa_supported(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kPortable:
      return true;
    case KernelIsa::kAvx2Fma:
#if defined(__x86_64__)
      // libgcc's answers include the OS check (XGETBV) that AVX state is saved.
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
      return false;
#endif
  }
  return false;
}

const KernelSet& active_kernels() {
  const KernelSet* set = active.load(std::memory_order_acquire);
  if (!set) {
    // Racing first calls all store the same set.
    set = &kernels_for(kernel_isa_supported(KernelIsa::kAvx2Fma) ? KernelIsa::kAvx2Fma
                                                                 : KernelIsa::kPortable);
    active.store(set, std::memory_order_release);
  }
  return *set;
}

KernelIsa active_kernel_isa() {
  return active_kernels().isa;
}

void set_active_kernel_isa(KernelIsa isa) {
  ZT_ASSERT(kernel_isa_supported(isa));
  active.store(&kernels_for(isa), std::memory_order_release);
}

const char* kernel_isa_name(KernelIsa isa) {
  return isa == KernelIsa::kAvx2Fma ? "avx2+fma" : "portable";
}

void gemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
              const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
              int64_t ldc) {
  active_kernels().gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

const char* gemm_f32_kernel_name() {
  return active_kernels().gemm_name;
}

}  // namespace zotrain::kernels
