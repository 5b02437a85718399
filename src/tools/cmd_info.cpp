#include <cstdio>
#include <thread>
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

#include "commands.h"
#include "kernels/conv2d.h"
#include "kernels/gemm.h"
#include "kernels/int8.h"
#include "kernels/isa.h"
#include "kernels/npu.h"
#include "kernels/philox_run.h"
#include "zotrain/dist/world.h"

namespace zotrain::tools {

namespace {

void run_info() {
  std::printf("zotrain %s (%s build, %s)\n", ZOTRAIN_VERSION, ZOTRAIN_BUILD_TYPE, __VERSION__);
  const char* isa = kernels::kernel_isa_name(kernels::active_kernel_isa());
  std::printf("kernel set: %s (ZOTRAIN_KERNELS chooses another)\n", isa);
  std::printf("kernel sets:");
  for (kernels::KernelIsa k : kernels::kAllKernelIsas) {
    const char* missing = kernels::kernel_isa_missing(k);
    std::printf(" %s%s%s%s", kernels::kernel_isa_name(k), *missing ? " (needs " : "", missing,
                *missing ? ")" : "");
  }
  std::printf("\n");
  std::printf(
      "kernels: gemm f32 = %s; conv2d f32 = %s; depthwise 3x3 f32 = %s phase-layout vectors "
      "(other depthwise shapes: direct loops); pooling = portable\n",
      kernels::gemm_f32_kernel_name(), kernels::conv2d_f32_kernel_name(), isa);
  std::printf("int8 kernels: %s\n", kernels::int8_kernels_name());
  std::printf("perturbation kernels: %s\n", kernels::perturbation_kernels_name());
  std::printf(
      "npu int8 kernels (--precision int8-npu): conv, linear = the int8 kernels above, %s; "
      "depthwise taps, requantization, residual add = %s; depthwise staging = %s 16-byte "
      "shuffle plans; pooling = portable%s\n",
      kernels::npu_requantizes_in_epilogue()
          ? "requantized in their tiles' epilogue (pixel quads, fused pooling, linear quads)"
          : "their int32 sums requantized after",
      kernels::npu_kernels_name(), kernels::npu_staging_kernels_name(),
#if defined(__x86_64__)
      " (avx2 clone on avx2 cpus)"
#else
      ""
#endif
  );
  const dist::World& world = dist::world();
  std::printf("mpi: %s", dist::World::has_mpi() ? "built in" : "not built in (libopenmpi-dev)");
  if (world.distributed()) std::printf("; rank %d of %d", world.rank(), world.size());
  std::printf("\n");
  std::printf("cpu: %u hardware threads; features:", std::thread::hardware_concurrency());
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.2")) std::printf(" sse4.2");
  if (__builtin_cpu_supports("avx2")) std::printf(" avx2");
  if (__builtin_cpu_supports("fma")) std::printf(" fma");
  if (__builtin_cpu_supports("avx512f")) std::printf(" avx512f");
  if (__builtin_cpu_supports("avx512vl")) std::printf(" avx512vl");
  if (__builtin_cpu_supports("avx512vnni")) std::printf(" avx512vnni");
  if (kernels::cpu_has_avx_vnni()) std::printf(" avxvnni");
#elif defined(__aarch64__)
  const unsigned long hwcap = getauxval(AT_HWCAP);
  if (hwcap & HWCAP_ASIMD) std::printf(" asimd");
  if (hwcap & HWCAP_ASIMDDP) std::printf(" asimddp");
#else
  std::printf(" (neither x86-64 nor aarch64)");
#endif
  std::printf("\n");
}

}  // namespace

void add_info_command(CLI::App& app) {
  app.add_subcommand("info", "version, build options, kernels and CPU features")
      ->callback(run_info);
}

}  // namespace zotrain::tools
