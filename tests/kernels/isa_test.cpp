#include "kernels/isa.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace zotrain {
namespace {

using kernels::KernelIsa;

// Tests switch instruction sets only inside for_each_kernel_isa, which switches back: the set
// chosen at start-up is active here.
TEST(KernelIsa, TheBestSupportedSetIsActive) {
  EXPECT_TRUE(kernels::kernel_isa_supported(KernelIsa::kPortable));
  KernelIsa best = KernelIsa::kPortable;
  for (KernelIsa isa : kernels::kAllKernelIsas)
    if (kernels::kernel_isa_supported(isa)) best = isa;
  const char* env = std::getenv("ZOTRAIN_KERNELS");
  if (!env || !*env) {
    EXPECT_EQ(kernels::active_kernel_isa(), best);
  }
  EXPECT_EQ(std::string(kernels::kernel_isa_name(KernelIsa::kPortable)), "portable");
  EXPECT_EQ(std::string(kernels::kernel_isa_name(KernelIsa::kAvx2Fma)), "avx2+fma");
  EXPECT_EQ(std::string(kernels::kernel_isa_name(KernelIsa::kAvx2FmaOnednn)), "avx2+fma+onednn");
  EXPECT_EQ(std::string(kernels::kernel_isa_name(KernelIsa::kAvx2FmaVnni)), "avx2+fma+vnni");
  EXPECT_EQ(std::string(kernels::kernel_isa_name(KernelIsa::kAvx2FmaAvxVnni)), "avx2+fma+avxvnni");
  EXPECT_EQ(std::string(kernels::kernel_isa_name(KernelIsa::kAvx2FmaOnednnAvxVnni)),
            "avx2+fma+onednn+avxvnni");
  EXPECT_EQ(std::string(kernels::kernel_isa_name(KernelIsa::kNeon)), "neon");
  EXPECT_EQ(std::string(kernels::kernel_isa_name(KernelIsa::kNeonDotprod)), "neon+dotprod");
#if defined(__aarch64__)
  // Advanced SIMD is part of every AArch64 Linux CPU.
  EXPECT_TRUE(kernels::kernel_isa_supported(KernelIsa::kNeon));
#endif
  // A set is supported exactly when nothing is missing, and says what is.
  for (KernelIsa isa : kernels::kAllKernelIsas)
    EXPECT_EQ(kernels::kernel_isa_supported(isa), *kernels::kernel_isa_missing(isa) == '\0')
        << kernels::kernel_isa_name(isa);
}

}  // namespace
}  // namespace zotrain
