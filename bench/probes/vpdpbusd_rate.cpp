// The int8 multiply-add rate of one core, on 256- and 512-bit registers: 12 independent chains
// of vpdpbusd, and of vpmaddwd + vpaddd on 256 bits, timed in thread CPU time. A probe for
// docs/benchmarks.md (an AVX-512 VNNI CPU only), not part of the build:
//   g++ -O2 -march=native bench/probes/vpdpbusd_rate.cpp -o /tmp/vpdpbusd_rate &&
//   /tmp/vpdpbusd_rate
#include <immintrin.h>

#include <cstdio>
#include <ctime>

namespace {

double cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Multiply-adds per second of `step` on vectors of `bytes` bytes doing `per_lane` products in
// each 32-bit lane.
template <class V, class Step>
double rate(Step step, int bytes, int per_lane) {
  V acc[12];
  for (V& a : acc) a = V{};
  V x = V{}, y = V{};
  constexpr long kIterations = 100000000;
  const double t0 = cpu_seconds();
  for (long i = 0; i < kIterations; ++i) {
#pragma GCC unroll 12
    for (V& a : acc) a = step(a, x, y);
    asm volatile("" : "+v"(x), "+v"(y));  // opaque operands: nothing folds
  }
  const double seconds = cpu_seconds() - t0;
  long long sink = 0;
  for (V& a : acc) sink += reinterpret_cast<long long*>(&a)[0];
  if (sink == 42) std::puts("");
  return 12.0 * kIterations * (bytes / 4) * per_lane / seconds;
}

}  // namespace

int main() {
  const double d256 = rate<__m256i>(
      [](__m256i a, __m256i x, __m256i y) { return _mm256_dpbusd_epi32(a, x, y); }, 32, 4);
  const double d512 = rate<__m512i>(
      [](__m512i a, __m512i x, __m512i y) { return _mm512_dpbusd_epi32(a, x, y); }, 64, 4);
  const double w256 = rate<__m256i>(
      [](__m256i a, __m256i x, __m256i y) { return _mm256_add_epi32(a, _mm256_madd_epi16(x, y)); },
      32, 2);
  std::printf(
      "G multiply-adds/s: vpdpbusd 256 bits %.1f, 512 bits %.1f; vpmaddwd+vpaddd 256 bits %.1f\n",
      d256 / 1e9, d512 / 1e9, w256 / 1e9);
}
