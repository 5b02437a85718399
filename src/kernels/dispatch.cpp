// Chooses the kernel set at the first kernel call: the one ZOTRAIN_KERNELS names, else the most
// preferred set the build and the CPU (and OS) support.
#include <atomic>
#include <cstdlib>
#include <string>

#if defined(__aarch64__)
#include <sys/auxv.h>
#endif
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "kernel_set.h"
#include "kernels/gemm.h"
#include "zotrain/core/error.h"

namespace zotrain::kernels {

namespace {

const KernelSet& kernels_for(KernelIsa isa) {
#if defined(__x86_64__)
  if (isa == KernelIsa::kAvx2Fma) return kAvx2FmaKernels;
  if (isa == KernelIsa::kAvx2FmaVnni) return avx512_vnni_kernels();
  if (isa == KernelIsa::kAvx2FmaAvxVnni) {
    static const KernelSet set = with_avx_vnni_int8(kAvx2FmaKernels, KernelIsa::kAvx2FmaAvxVnni,
                                                    "avx2+fma+avxvnni: the avx2+fma 6x16 tiles");
    return set;
  }
#endif
#if defined(__aarch64__)
  if (isa == KernelIsa::kNeon) return kNeonKernels;
  if (isa == KernelIsa::kNeonDotprod) {
    static const KernelSet set = with_dotprod_int8(kNeonKernels);
    return set;
  }
#endif
#if defined(ZOTRAIN_HAVE_ONEDNN) && defined(__x86_64__)
  if (isa == KernelIsa::kAvx2FmaOnednn) return onednn_kernels();
  if (isa == KernelIsa::kAvx2FmaOnednnVnni) return onednn_vnni_kernels();
  if (isa == KernelIsa::kAvx2FmaOnednnAvxVnni) return onednn_avx_vnni_kernels();
#endif
  (void)isa;
  return kPortableKernels;
}

bool cpu_has_avx2_fma() {
#if defined(__x86_64__)
  // libgcc's answers include the OS check (XGETBV) that AVX (and AVX-512) state is saved.
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool cpu_has_vnni() {
#if defined(__x86_64__)
  return cpu_has_avx2_fma() && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

#if defined(__aarch64__)
bool cpu_has_dotprod() {
  return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
}
#endif

const KernelSet& startup_kernels() {
  const char* env = std::getenv("ZOTRAIN_KERNELS");
  if (env && *env) {
    for (KernelIsa isa : kAllKernelIsas)
      if (env == std::string(kernel_isa_name(isa))) {
        if (!kernel_isa_supported(isa))
          ZT_THROW(InputError(std::string("ZOTRAIN_KERNELS=") + env +
                              ": this build or this CPU does not support that kernel set"));
        return kernels_for(isa);
      }
    ZT_THROW(InputError(std::string("ZOTRAIN_KERNELS=") + env +
                        ": expected portable, avx2+fma, avx2+fma+avxvnni, avx2+fma+vnni, "
                        "avx2+fma+onednn, avx2+fma+onednn+avxvnni, avx2+fma+onednn+vnni, neon "
                        "or neon+dotprod"));
  }
  KernelIsa best = KernelIsa::kPortable;
  for (KernelIsa isa : kAllKernelIsas)
    if (kernel_isa_supported(isa)) best = isa;
  return kernels_for(best);
}

// Null until the first kernel call or set_active_kernel_isa.
std::atomic<const KernelSet*> active{nullptr};

}  // namespace

bool cpu_has_avx_vnni() {
#if defined(__x86_64__)
  // CPUID leaf 7, sub-leaf 1, EAX bit 4 (clang 14's __builtin_cpu_supports does not know
  // "avxvnni"); its VEX registers are AVX's, whose OS support cpu_has_avx2_fma checks.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return cpu_has_avx2_fma() && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) &&
         (eax & (1u << 4)) != 0;
#else
  return false;
#endif
}

#if defined(__x86_64__)
const KernelSet& avx512_vnni_kernels() {
  static const KernelSet set =
      with_vnni_int8(with_avx512_f32(kAvx2FmaKernels), KernelIsa::kAvx2FmaVnni,
                     "avx2+fma+vnni: avx-512 8x16 tiles");
  return set;
}
#endif

std::vector<const KernelSet*> compiled_kernel_sets() {
  std::vector<const KernelSet*> sets{&kPortableKernels};
#if defined(__x86_64__)
  sets.push_back(&kAvx2FmaKernels);
  sets.push_back(&kernels_for(KernelIsa::kAvx2FmaVnni));
  sets.push_back(&kernels_for(KernelIsa::kAvx2FmaAvxVnni));
#endif
#if defined(__aarch64__)
  sets.push_back(&kNeonKernels);
  sets.push_back(&kernels_for(KernelIsa::kNeonDotprod));
#endif
#if defined(ZOTRAIN_HAVE_ONEDNN) && defined(__x86_64__)
  sets.push_back(&onednn_kernels());
  sets.push_back(&kernels_for(KernelIsa::kAvx2FmaOnednnVnni));
  sets.push_back(&kernels_for(KernelIsa::kAvx2FmaOnednnAvxVnni));
#endif
  return sets;
}

const char* kernel_isa_missing(KernelIsa isa) {
#if defined(ZOTRAIN_HAVE_ONEDNN)
  const bool onednn = true;
#else
  const bool onednn = false;
#endif
  const bool x86 =
#if defined(__x86_64__)
      true;
#else
      false;
#endif
  const bool uses_onednn = isa == KernelIsa::kAvx2FmaOnednn ||
                           isa == KernelIsa::kAvx2FmaOnednnVnni ||
                           isa == KernelIsa::kAvx2FmaOnednnAvxVnni;
  const bool uses_vnni = isa == KernelIsa::kAvx2FmaVnni || isa == KernelIsa::kAvx2FmaOnednnVnni;
  const bool uses_avx_vnni =
      isa == KernelIsa::kAvx2FmaAvxVnni || isa == KernelIsa::kAvx2FmaOnednnAvxVnni;
  if (isa == KernelIsa::kPortable) return "";
  if (isa == KernelIsa::kNeon || isa == KernelIsa::kNeonDotprod) {
#if defined(__aarch64__)
    return isa == KernelIsa::kNeonDotprod && !cpu_has_dotprod()
               ? "a CPU with the dot-product instructions (asimddp)"
               : "";
#else
    return "an aarch64 build";
#endif
  }
  if (!x86) return "an x86-64 build";
  if (uses_onednn && !onednn) return "a build with oneDNN";
  if (!cpu_has_avx2_fma()) return "a CPU with AVX2 and FMA";
  if (uses_vnni && !cpu_has_vnni()) return "a CPU with AVX-512 VL and VNNI";
  if (uses_avx_vnni && !cpu_has_avx_vnni()) return "a CPU with AVX-VNNI";
  return "";
}

bool kernel_isa_supported(KernelIsa isa) {
  return *kernel_isa_missing(isa) == '\0';
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
    case KernelIsa::kAvx2FmaVnni:
      return "avx2+fma+vnni";
    case KernelIsa::kAvx2FmaOnednnVnni:
      return "avx2+fma+onednn+vnni";
    case KernelIsa::kNeon:
      return "neon";
    case KernelIsa::kNeonDotprod:
      return "neon+dotprod";
    case KernelIsa::kAvx2FmaAvxVnni:
      return "avx2+fma+avxvnni";
    case KernelIsa::kAvx2FmaOnednnAvxVnni:
      return "avx2+fma+onednn+avxvnni";
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
