// The instruction sets the fast kernels (gemm_f32, conv2d_*) are compiled for. The library
// carries a portable build of them and, on x86-64, an AVX2+FMA build, and with oneDNN (x86 only)
// a set that runs oneDNN where it is faster; each x86 set has a "+vnni" twin whose int8 kernels
// use AVX-512 VNNI on 256-bit registers and whose f32 tiles run on 512-bit vectors. On AArch64: a
// NEON build and its "+dotprod" twin. The last the CPU supports is chosen at the first kernel
// call, unless the environment variable ZOTRAIN_KERNELS names another (kernel_isa_name). Each set
// is self-consistent (results do not depend on blocking or thread count); the portable, AVX2 and
// NEON sets may differ in the last bits of f32 results (fused multiply-adds or not, lane sums), a
// "+vnni" twin gives its set's f32 bits, and int8 results are the same bits in every set.
#pragma once

namespace zotrain::kernels {

enum class KernelIsa {
  kPortable,  // GCC vector types of 4 floats, whatever the target lowers them to
  kAvx2Fma,   // x86-64 with AVX2 and FMA: vectors of 8 floats, fused multiply-adds
  // kAvx2Fma with oneDNN's sgemm for 1x1 stride-1 convolutions (builds that found oneDNN).
  kAvx2FmaOnednn,
  // kAvx2Fma and kAvx2FmaOnednn with the int8 convolution and A·Bᵀ in AVX-512 VNNI (vpdpwssd,
  // vpdpbusd; the convolution in quads on 512-bit registers; CPUs with AVX-512 VL and VNNI),
  // and the f32 GEMM, convolution forward, depthwise taps and pooling on 512-bit vectors (the
  // AVX2 sets' bits).
  // The "+vnni" sets are the AVX-512 sets.
  kAvx2FmaVnni,
  kAvx2FmaOnednnVnni,
  kNeon,  // AArch64: vectors of 4 floats with fmla, int8 tiles by smull + sadalp (ARMv8.0)
  // kNeon with the int8 tiles in the ARMv8.2 dot-product instructions (sdot; HWCAP_ASIMDDP).
  kNeonDotprod,
  // kAvx2Fma and kAvx2FmaOnednn with the int8 kernels' dot-product steps in AVX-VNNI (the VEX
  // vpdpwssd and vpdpbusd on 256 bits; CPUs with AVX-VNNI, which may lack AVX-512): the AVX2
  // layouts and tiles, the same bits. (Last, so that the earlier sets keep their numbers.)
  kAvx2FmaAvxVnni,
  kAvx2FmaOnednnAvxVnni,
};
// Every set, in order of preference (the last supported one is the default).
constexpr KernelIsa kAllKernelIsas[] = {
    KernelIsa::kPortable,          KernelIsa::kAvx2Fma,       KernelIsa::kAvx2FmaAvxVnni,
    KernelIsa::kAvx2FmaVnni,       KernelIsa::kAvx2FmaOnednn, KernelIsa::kAvx2FmaOnednnAvxVnni,
    KernelIsa::kAvx2FmaOnednnVnni, KernelIsa::kNeon,          KernelIsa::kNeonDotprod};

// Whether the CPU (and OS) can run AVX-VNNI, the VEX vpdpbusd and vpdpwssd on 256 bits.
bool cpu_has_avx_vnni();
// Whether `isa` is compiled in and the CPU can run it.
bool kernel_isa_supported(KernelIsa isa);
// Why `isa` is not supported ("" when it is): what the build or the CPU lacks.
const char* kernel_isa_missing(KernelIsa isa);
// The instruction set the kernels run with.
KernelIsa active_kernel_isa();
// Makes the kernels run with `isa` (which must be supported), for tests and benchmarks that
// compare the builds. Not safe while kernels run on other threads.
void set_active_kernel_isa(KernelIsa isa);
// "portable", "avx2+fma", "avx2+fma+avxvnni", "avx2+fma+vnni", "avx2+fma+onednn",
// "avx2+fma+onednn+avxvnni", "avx2+fma+onednn+vnni", "neon", "neon+dotprod".
const char* kernel_isa_name(KernelIsa isa);

}  // namespace zotrain::kernels
