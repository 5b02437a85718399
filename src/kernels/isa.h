// The instruction sets the fast kernels (gemm_f32, conv2d_*) are compiled for. The library
// carries a portable build of them and, on x86-64, an AVX2+FMA build, and with oneDNN (x86 only)
// a set that runs oneDNN where it is faster. The last the CPU supports is chosen at the first
// kernel call, unless the environment variable ZOTRAIN_KERNELS names another ("portable",
// "avx2+fma", "avx2+fma+onednn"). Each set is self-consistent (results do not depend on
// blocking or thread count) but two sets may differ in the last bits.
#pragma once

namespace zotrain::kernels {

enum class KernelIsa {
  kPortable,  // GCC vector types of 4 floats, whatever the target lowers them to
  kAvx2Fma,   // x86-64 with AVX2 and FMA: vectors of 8 floats, fused multiply-adds
  // kAvx2Fma with oneDNN's sgemm for 1x1 stride-1 convolutions (builds that found oneDNN).
  kAvx2FmaOnednn,
};
// Every set, in order of preference (the last supported one is the default).
constexpr KernelIsa kAllKernelIsas[] = {KernelIsa::kPortable, KernelIsa::kAvx2Fma,
                                        KernelIsa::kAvx2FmaOnednn};

// Whether `isa` is compiled in and the CPU can run it.
bool kernel_isa_supported(KernelIsa isa);
// The instruction set the kernels run with.
KernelIsa active_kernel_isa();
// Makes the kernels run with `isa` (which must be supported), for tests and benchmarks that
// compare the builds. Not safe while kernels run on other threads.
void set_active_kernel_isa(KernelIsa isa);
// "portable", "avx2+fma", "avx2+fma+onednn".
const char* kernel_isa_name(KernelIsa isa);

}  // namespace zotrain::kernels
