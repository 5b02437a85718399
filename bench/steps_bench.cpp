// End-to-end training steps (Google Benchmark): Full BP, Full ZO, ElasticZO, INT8* (NITI) and the
// NPU-style int8 step, plus forward passes alone, for LeNet-5 at batch 256, MobileNetV2 and
// resnet18:0.25 at batch 32, on 1 and 2 threads; the f32 ZO steps also with one perturbation
// lane per thread (zo_lanes), and on LeNet-5 at batch 16, where a layer's rows are little work
// to split. Each case builds its Trainer as `zotrain bench`
// does (StepBench: one generated batch of the input shape) and times step() after one untimed step.
//
// Counters, all from the wall time of the timed loop (not Google Benchmark's rate counters,
// which divide by the CPU time of the calling thread only): forward passes per second, GFLOP/s
// (f32) or GOP/s (int8) from StepBench's operation count (2 per multiply-add of the forward
// pass; a backward pass counts twice the forward of the layers it runs through), and % of peak:
// the count against `threads` times the peak of one core.
//
// The peak of one core is measured at start-up by a loop of independent instructions the active
// kernel set's tiles multiply with, on registers only: vfmadd231ps (f32; on 512 bits in the
// AVX-512 sets, whose f32 tiles run 16 lanes) and vpmaddwd (int8: 16 multiply-adds of int16
// pairs, as many as the AVX-VNNI sets' vpdpwssd makes) or, in the AVX-512 sets, vpdpbusd on 512
// bits; best of 5 short runs timed in thread CPU time (so that the other work of a shared machine
// does not lower it); ZOTRAIN_PEAK_GFLOPS and ZOTRAIN_PEAK_GOPS (per core) replace the
// measurement. The printed context says which.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "kernels/isa.h"
#include "train/step_bench.h"
#include "zotrain/core/error.h"

namespace zotrain {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU seconds of the calling thread (not counting the time it waits for a core).
double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// ---- peak of one core ----

constexpr int64_t kPeakLoops = 1 << 22;

#if defined(__x86_64__)
// Twelve `insn` on registers, each updating its own accumulator (ymm0-11, or zmm0-11 with
// r = "zmm") from the operands 12 and 13: twelve independent chains cover the instruction's
// latency on both pipes. `trips` trips of them, all registers zeroed first (no denormals; the
// VEX vpxor clears the upper halves of zmm too). Written in assembly because GCC spills an
// array of 12 vector accumulators to the stack, which halves the rate measured.
// clang-format off
#define ZT_ON_12(insn, r)                                                                       \
  insn " %%" r "12, %%" r "13, %%" r "0\n\t"  insn " %%" r "12, %%" r "13, %%" r "1\n\t"      \
  insn " %%" r "12, %%" r "13, %%" r "2\n\t"  insn " %%" r "12, %%" r "13, %%" r "3\n\t"      \
  insn " %%" r "12, %%" r "13, %%" r "4\n\t"  insn " %%" r "12, %%" r "13, %%" r "5\n\t"      \
  insn " %%" r "12, %%" r "13, %%" r "6\n\t"  insn " %%" r "12, %%" r "13, %%" r "7\n\t"      \
  insn " %%" r "12, %%" r "13, %%" r "8\n\t"  insn " %%" r "12, %%" r "13, %%" r "9\n\t"      \
  insn " %%" r "12, %%" r "13, %%" r "10\n\t" insn " %%" r "12, %%" r "13, %%" r "11\n\t"
#define ZT_PEAK_LOOP(insn, r, trips)                                            \
  asm volatile(ZT_ON_12("vpxor", "ymm")                                         \
               "vpxor %%ymm12, %%ymm12, %%ymm12\n\t"                             \
               "vpxor %%ymm13, %%ymm13, %%ymm13\n\t"                             \
               "1:\n\t" ZT_ON_12(insn, r) "dec %0\n\tjnz 1b\n\tvzeroupper"      \
               : "+r"(trips)                                                    \
               :                                                                \
               : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", \
                 "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "cc")
// clang-format on

// The instruction each peak is measured on, and its operations (2 per multiply-add).
enum class PeakLoop {
  kFma,     // vfmadd231ps: 8 multiply-adds
  kFma512,  // vfmadd231ps on 512 bits: 16 (the AVX-512 sets' f32 tiles)
  kMadd,    // vpmaddwd: 16 multiply-adds of int16 pairs
  kVnni,    // vpdpbusd on 512 bits: 64 multiply-adds of u8 x s8 (the VNNI sets' convolutions)
};

// Operations per second of the loop, in thread CPU time.
double peak_loop_rate(PeakLoop loop) {
  int64_t trips = kPeakLoops;
  const double t0 = thread_seconds();
  double ops = 0;
  switch (loop) {
    case PeakLoop::kFma:
      ZT_PEAK_LOOP("vfmadd231ps", "ymm", trips);
      ops = 16;
      break;
    case PeakLoop::kFma512:
      ZT_PEAK_LOOP("vfmadd231ps", "zmm", trips);
      ops = 32;
      break;
    case PeakLoop::kMadd:
      ZT_PEAK_LOOP("vpmaddwd", "ymm", trips);
      ops = 32;
      break;
    case PeakLoop::kVnni:
      ZT_PEAK_LOOP("vpdpbusd", "zmm", trips);
      ops = 128;
      break;
  }
  const double s = thread_seconds() - t0;
  return ops * 12 * static_cast<double>(kPeakLoops) / s;
}
double fma_rate() {
  return peak_loop_rate(PeakLoop::kFma);
}
double fma512_rate() {
  return peak_loop_rate(PeakLoop::kFma512);
}
double madd_rate() {
  return peak_loop_rate(PeakLoop::kMadd);
}
double vnni_rate() {
  return peak_loop_rate(PeakLoop::kVnni);
}
#else
constexpr double (*fma_rate)() = nullptr;
constexpr double (*fma512_rate)() = nullptr;
constexpr double (*madd_rate)() = nullptr;
constexpr double (*vnni_rate)() = nullptr;
#endif

// Whether the active kernel set is one of the AVX-512 ("+vnni") sets, whose f32 tiles run on 512
// bits and int8 tiles on vpdpbusd: the instructions the peaks are measured on.
bool avx512_active() {
  const kernels::KernelIsa isa = kernels::active_kernel_isa();
  return isa == kernels::KernelIsa::kAvx2FmaVnni || isa == kernels::KernelIsa::kAvx2FmaOnednnVnni;
}

// Peak of one core in G operations per second: the environment variable, or the best of 5 runs
// of `loop` (the machine may be shared: the fastest run is the least disturbed), or 0 (unknown).
// Adds the value and where it came from to the printed context.
double core_peak(const char* env, const char* key, double (*loop)(), const char* insn) {
  double peak = 0;
  std::string how;
  if (const char* v = std::getenv(env)) {
    peak = std::atof(v);
    how = std::string("from ") + env;
  } else if (loop && kernels::kernel_isa_supported(kernels::KernelIsa::kAvx2Fma)) {
    for (int i = 0; i < 5; ++i) peak = std::max(peak, loop() / 1e9);
    how = std::string("measured: 12 independent ") + insn +
          " on registers, best of 5, thread CPU time";
  } else {
    how = std::string("unknown (no AVX2+FMA): set ") + env;
  }
  benchmark::AddCustomContext(key, std::to_string(peak) + " per core, " + how);
  return peak;
}

// ---- cases ----

struct ModelCase {
  const char* name;  // as bench/compare.sh names its cases
  const char* model;
  Shape item;
  int64_t batch;
  bool zo_steps_only;  // a small batch: the f32 ZO steps, with and without lanes
};

struct StepCase {
  const char* name;
  const char* method;
  int bp_layers;  // elastic only
  const char* precision;
  bool forward_only;  // time StepBench::forward instead of step
  bool lanes;         // zo_lanes = threads: each perturbed pass on a thread of its own
};

const ModelCase kModels[] = {
    {"lenet5", "lenet5", Shape{1, 28, 28}, 256, false},
    {"lenet5-b16", "lenet5", Shape{1, 28, 28}, 16, true},
    {"mbv2-0.35-28", "mobilenetv2:0.35", Shape{1, 28, 28}, 32, false},
    {"mbv2-1.0-64", "mobilenetv2", Shape{3, 64, 64}, 32, false},
    {"resnet18-0.25-28", "resnet18:0.25", Shape{1, 28, 28}, 32, false},  // the QScheduler runs'
};

const StepCase kSteps[] = {
    {"FullBP", "bp", 0, "f32", false, false},
    {"FullZO", "zo", 0, "f32", false, false},  // q = 1, two-point SPSA
    {"FullZO-lanes", "zo", 0, "f32", false, true},
    {"ElasticZO", "elastic", 2, "f32", false, false},
    {"ElasticZO-lanes", "elastic", 2, "f32", false, true},
    {"INT8-BP", "bp", 0, "int8", false, false},  // NITI's integer backprop
    {"INT8*-ZO", "zo", 0, "int8", false, false},
    {"INT8*-ElasticZO", "elastic", 2, "int8", false, false},
    {"NPU-ZO", "zo", 0, "int8-npu", false, false},
    {"Forward", "zo", 0, "f32", true, false},
    {"NPU-Forward", "zo", 0, "int8-npu", true, false},
};

double g_peak_gflops = 0, g_peak_gops = 0;

void run_case(benchmark::State& state, const ModelCase& m, const StepCase& s) {
  TrainConfig cfg;
  cfg.model = m.model;
  cfg.batch = m.batch;
  cfg.method = parse_name<Method>("method", s.method);
  cfg.bp_layers = s.bp_layers;
  cfg.precision = parse_name<Precision>("precision", s.precision);
  cfg.q = 1;
  cfg.lr = 0.01;  // as bench/compare.sh: small steps keep the weights far from overflow
  cfg.zo_lr = 1e-4;
  cfg.threads = static_cast<int>(state.range(0));
  cfg.zo_lanes = s.lanes ? cfg.threads : 1;
  std::unique_ptr<StepBench> bench;
  try {
    bench = std::make_unique<StepBench>(cfg, m.item, 10);
  } catch (const InputError& e) {
    state.SkipWithError(e.what());
    return;
  }
  auto run = [&] { s.forward_only ? bench->forward() : bench->step(); };
  run();  // warm-up: first touch of the buffers
  const double ops0 = bench->step_ops();
  const int64_t passes0 = bench->trainer().state().forward_passes;
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) run();
  const double seconds = seconds_since(t0);
  const double n = static_cast<double>(state.iterations());
  const double ops = s.forward_only ? n * bench->forward_ops() : bench->step_ops() - ops0;
  const double passes =
      s.forward_only ? n : static_cast<double>(bench->trainer().state().forward_passes - passes0);
  const bool f32 = std::string(s.precision) == "f32";
  const double gops = ops / seconds / 1e9;
  const double peak = (f32 ? g_peak_gflops : g_peak_gops) * cfg.threads;
  state.counters["fwd/s"] = passes / seconds;
  state.counters[f32 ? "GFLOP/s" : "GOP/s"] = gops;
  if (peak > 0) state.counters["%peak"] = 100.0 * gops / peak;
  state.counters["Gop/step"] = ops / n / 1e9;
}

// The NITI integer network has no batch norm or residual layers: its steps run on LeNet-5 only.
bool supported(const ModelCase& m, const StepCase& s) {
  const bool f32_zo =
      std::string(s.precision) == "f32" && std::string(s.method) != "bp" && !s.forward_only;
  if (m.zo_steps_only) return f32_zo;
  return std::string(s.precision) != "int8" || std::string(m.model) == "lenet5";
}

void register_cases() {
  for (const ModelCase& m : kModels)
    for (const StepCase& s : kSteps) {
      if (!supported(m, s)) continue;
      const std::string name = std::string("Step/") + m.name + "/" + s.name;
      auto* b = benchmark::RegisterBenchmark(
          name.c_str(), [&m, &s](benchmark::State& st) { run_case(st, m, s); });
      b->ArgName("threads");
      if (!s.lanes) b->Arg(1);  // one lane on one thread is the plain step
      b->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
    }
}

}  // namespace
}  // namespace zotrain

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const bool wide = zotrain::avx512_active();
  zotrain::g_peak_gflops = zotrain::core_peak(
      "ZOTRAIN_PEAK_GFLOPS", "peak_gflops", wide ? zotrain::fma512_rate : zotrain::fma_rate,
      wide ? "vfmadd231ps (512 bits)" : "vfmadd231ps (256 bits)");
  zotrain::g_peak_gops = zotrain::core_peak("ZOTRAIN_PEAK_GOPS", "peak_gops",
                                            wide ? zotrain::vnni_rate : zotrain::madd_rate,
                                            wide ? "vpdpbusd (512 bits)" : "vpmaddwd (256 bits)");
  zotrain::register_cases();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
