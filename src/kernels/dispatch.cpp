// Chooses the kernel set at the first kernel call: the one ZOTRAIN_KERNELS names, else the most
// preferred set the build and the CPU (and OS) support.
#include <atomic>
#include <cstdlib>
#include <string>

#include "kernel_set.h"
#include "kernels/gemm.h"
#include "zotrain/core/error.h"

namespace zotrain::kernels {

namespace {

const KernelSet& kernels_for(KernelIsa isa) {
#if defined(__x86_64__)
  if (isa == KernelIsa::kAvx2Fma) return kAvx2FmaKernels;
#endif
#if defined(ZOTRAIN_HAVE_ONEDNN) && defined(__x86_64__)
  if (isa == KernelIsa::kAvx2FmaOnednn) return onednn_kernels();
#endif
  (void)isa;
  return kPortableKernels;
}

bool cpu_has_avx2_fma() {
#if defined(__x86_64__)
  // libgcc's answers include the OS check (XGETBV) that AVX state is saved.
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

const KernelSet& startup_kernels() {
  const char* env = std::getenv("ZOTRAIN_KERNELS");
  if (env && *env) {
    for (KernelIsa isa : kAllKernelIsas)
      if (env == std::string(kernel_isa_name(isa))) {
        if (!kernel_isa_supported(isa))
          throw InputError(std::string("ZOTRAIN_KERNELS=") + env +
                           ": this build or this CPU does not support that kernel set");
        return kernels_for(isa);
      }
    throw InputError(std::string("ZOTRAIN_KERNELS=") + env +
                     ": expected portable, avx2+fma or avx2+fma+onednn");
  }
  KernelIsa best = KernelIsa::kPortable;
  for (KernelIsa isa : kAllKernelIsas)
    if (kernel_isa_supported(isa)) best = isa;
  return kernels_for(best);
}

// Null until the first kernel call or set_active_kernel_isa.
std::atomic<const KernelSet*> active{nullptr};

}  // namespace

std::vector<const KernelSet*> compiled_kernel_sets() {
  std::vector<const KernelSet*> sets{&kPortableKernels};
#if defined(__x86_64__)
  sets.push_back(&kAvx2FmaKernels);
#endif
#if defined(ZOTRAIN_HAVE_ONEDNN) && defined(__x86_64__)
  sets.push_back(&onednn_kernels());
#endif
  return sets;
}

bool kernel_isa_supported(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kPortable:
      return true;
    case KernelIsa::kAvx2Fma:
      return cpu_has_avx2_fma();
    case KernelIsa::kAvx2FmaOnednn:
#if defined(ZOTRAIN_HAVE_ONEDNN)
      return cpu_has_avx2_fma();
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
    set = &startup_kernels();
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
  switch (isa) {
    case KernelIsa::kPortable:
      return "portable";
    case KernelIsa::kAvx2Fma:
      return "avx2+fma";
    case KernelIsa::kAvx2FmaOnednn:
      return "avx2+fma+onednn";
  }
  return "?";
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
