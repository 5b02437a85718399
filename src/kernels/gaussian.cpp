// Box-Muller over vectors of L lanes (GCC vector types): on x86-64 8 in gaussian_pairs' clones
// (AVX2 registers in the AVX2 clone, two SSE registers in the baseline one), 16 in the AVX-512
// build (one 512-bit register); 4 elsewhere (one NEON register on AArch64, where GCC turned the
// 8-lane code into scalar selects and conversions: 73 instructions a pair on a Cortex-A53). Lanes
// are independent and every operation is the same IEEE operation at any width, so the widths give
// the same bits. The polynomials are Cephes' logf, sinf and cosf (about one ulp); the angle's range
// reduction is exact because a = 2 pi V with V a multiple of 2^-24: 4 V = n + x exactly, n an
// integer, x in [-1/2, 1/2), and a = n pi/2 + x pi/2. CMakeLists.txt compiles this file with
// -ffp-contract=off, so no target fuses a multiply and an add.
#include "kernels/gaussian.h"

#include <cstring>

#include "kernel_set.h"
#include "target_clones.h"

namespace zotrain::kernels {

namespace {

template <int L>
struct Lanes {
  typedef float F __attribute__((vector_size(L * sizeof(float))));
  typedef int32_t I __attribute__((vector_size(L * sizeof(int32_t))));
  typedef uint32_t U __attribute__((vector_size(L * sizeof(uint32_t))));
};

#define ZT_INLINE inline __attribute__((always_inline))

template <typename F>
ZT_INLINE F splat(float s) {
  return s - F{};
}

// ln u for u in (0, 1], normal: u = m 2^e with m in [sqrt(1/2), sqrt(2)), ln u = ln m + e ln 2.
template <typename F, typename I>
ZT_INLINE F log_unit(F u) {
  I bits;
  std::memcpy(&bits, &u, sizeof bits);
  I e = (bits >> 23) - 126;  // u = m' 2^e, m' in [1/2, 1)
  I mbits = (bits & 0x007fffff) | 0x3f000000;
  F m;
  std::memcpy(&m, &mbits, sizeof m);
  const I small = m < splat<F>(0.707106781186547524f);  // -1 where m' < sqrt(1/2)
  e += small;                                           // then m = 2 m'
  const F x = (m + (small ? m : F{})) - splat<F>(1.0f);
  const F ef = __builtin_convertvector(e, F);
  const F z = x * x;
  F y = splat<F>(7.0376836292e-2f);
  y = y * x - splat<F>(1.1514610310e-1f);
  y = y * x + splat<F>(1.1676998740e-1f);
  y = y * x - splat<F>(1.2420140846e-1f);
  y = y * x + splat<F>(1.4249322787e-1f);
  y = y * x - splat<F>(1.6668057665e-1f);
  y = y * x + splat<F>(2.0000714765e-1f);
  y = y * x - splat<F>(2.4999993993e-1f);
  y = y * x + splat<F>(3.3333331174e-1f);
  y = y * x * z;
  y = y + ef * splat<F>(-2.12194440e-4f);  // ln 2 = 0.693359375 - 2.12194440e-4, the first exact
  y = y - z * splat<F>(0.5f);
  return (x + y) + ef * splat<F>(0.693359375f);
}

// z0 = r cos(2 pi v), z1 = r sin(2 pi v) for v in [0, 1), a multiple of 2^-24.
template <typename F, typename I>
ZT_INLINE void polar(F r, F v, F& z0, F& z1) {
  const F t = v * splat<F>(4.0f);                              // exact
  const I n = __builtin_convertvector(t + splat<F>(0.5f), I);  // nearest quadrant, 0..4
  const F x = (t - __builtin_convertvector(n, F)) * splat<F>(1.57079632679489662f);  // |x| <= pi/4
  const F z = x * x;
  F s = splat<F>(-1.9515295891e-4f);
  s = s * z + splat<F>(8.3321608736e-3f);
  s = s * z - splat<F>(1.6666654611e-1f);
  s = s * z * x + x;
  F c = splat<F>(2.443315711809948e-5f);
  c = c * z - splat<F>(1.388731625493765e-3f);
  c = c * z + splat<F>(4.166664568298827e-2f);
  c = c * z * z - z * splat<F>(0.5f) + splat<F>(1.0f);
  // a = n pi/2 + x: odd quadrants swap sine and cosine; the signs follow the quadrant.
  const I odd = (n & 1) != 0;
  const F sin_a = odd ? c : s, cos_a = odd ? s : c;
  const I sin_neg = (n & 2) != 0, cos_neg = ((n + 1) & 2) != 0;
  z0 = r * (cos_neg ? -cos_a : cos_a);
  z1 = r * (sin_neg ? -sin_a : sin_a);
}

// Lanes of a and b picked by constant indices (b's from L on): GCC's builtin and Clang's. The
// index vector's type is the operands' integer type, I.
#if defined(__clang__)
#define ZT_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define ZT_SHUFFLE(a, b, ...) __builtin_shuffle(a, b, I{__VA_ARGS__})
#endif

// The words u (word 0) and v (word 1) of L consecutive blocks, from the 4 L words they span:
// vector shuffles, not lane stores (which stall the vector loads after them).
template <int L>
ZT_INLINE void unit_words(const uint32_t* words, typename Lanes<L>::I& u, typename Lanes<L>::I& v) {
  using I = typename Lanes<L>::I;
  I a, b, c, d;
  std::memcpy(&a, words, sizeof a);
  std::memcpy(&b, words + L, sizeof b);
  std::memcpy(&c, words + 2 * L, sizeof c);
  std::memcpy(&d, words + 3 * L, sizeof d);
  if constexpr (L == 4) {
    const I ab = ZT_SHUFFLE(a, b, 0, 4, 1, 5);  // u0, u1, v0, v1
    const I cd = ZT_SHUFFLE(c, d, 0, 4, 1, 5);  // u2, u3, v2, v3
    u = ZT_SHUFFLE(ab, cd, 0, 1, 4, 5);
    v = ZT_SHUFFLE(ab, cd, 2, 3, 6, 7);
  } else if constexpr (L == 8) {
    const I ab = ZT_SHUFFLE(a, b, 0, 4, 8, 12, 1, 5, 9, 13);  // u0..u3, v0..v3
    const I cd = ZT_SHUFFLE(c, d, 0, 4, 8, 12, 1, 5, 9, 13);  // u4..u7, v4..v7
    u = ZT_SHUFFLE(ab, cd, 0, 1, 2, 3, 8, 9, 10, 11);
    v = ZT_SHUFFLE(ab, cd, 4, 5, 6, 7, 12, 13, 14, 15);
  } else {
    static_assert(L == 16);
    const I ab = ZT_SHUFFLE(a, b, 0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
    const I cd = ZT_SHUFFLE(c, d, 0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
    u = ZT_SHUFFLE(ab, cd, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
    v = ZT_SHUFFLE(ab, cd, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  }
}

// z0 = r cos a, z1 = r sin a of the pairs whose words u and v are in the lanes of uw and vw.
template <int L>
ZT_INLINE void box_muller(const typename Lanes<L>::I& uw, const typename Lanes<L>::I& vw,
                          typename Lanes<L>::F& z0, typename Lanes<L>::F& z1) {
  using F = typename Lanes<L>::F;
  using I = typename Lanes<L>::I;
  using U = typename Lanes<L>::U;
  const U ub = reinterpret_cast<U>(uw) >> 8, vb = reinterpret_cast<U>(vw) >> 8;
  // Below 2^24 + 1, so the conversions from int32 are exact.
  const F u = __builtin_convertvector(reinterpret_cast<I>(ub + 1), F) * splat<F>(0x1p-24f);
  const F v = __builtin_convertvector(reinterpret_cast<I>(vb), F) * splat<F>(0x1p-24f);
  F r = splat<F>(-2.0f) * log_unit<F, I>(u);
  for (int l = 0; l < L; ++l) r[l] = __builtin_sqrtf(r[l]);
  polar<F, I>(r, v, z0, z1);
}

// The values of L pairs from their 4 L words, into 2 L floats of z.
template <int L>
ZT_INLINE void full_lanes(const uint32_t* words, float* z) {
  using F = typename Lanes<L>::F;
  using I = typename Lanes<L>::I;
  I u, v;
  unit_words<L>(words, u, v);
  F z0, z1;
  box_muller<L>(u, v, z0, z1);
  F lo, hi;
  if constexpr (L == 4) {
    lo = ZT_SHUFFLE(z0, z1, 0, 4, 1, 5);
    hi = ZT_SHUFFLE(z0, z1, 2, 6, 3, 7);
  } else if constexpr (L == 8) {
    lo = ZT_SHUFFLE(z0, z1, 0, 8, 1, 9, 2, 10, 3, 11);
    hi = ZT_SHUFFLE(z0, z1, 4, 12, 5, 13, 6, 14, 7, 15);
  } else {
    lo = ZT_SHUFFLE(z0, z1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    hi = ZT_SHUFFLE(z0, z1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  }
  std::memcpy(z, &lo, sizeof lo);
  std::memcpy(z + L, &hi, sizeof hi);
}

// gaussian_pairs on vectors of L lanes: whole vectors, then the rest in one with idle lanes.
template <int L>
ZT_INLINE void pairs_in_lanes(int64_t pairs, const uint32_t* words, float* z) {
  using F = typename Lanes<L>::F;
  using I = typename Lanes<L>::I;
  int64_t b0 = 0;
  for (; b0 + L <= pairs; b0 += L) full_lanes<L>(words + 4 * b0, z + 2 * b0);
  if (b0 == pairs) return;
  const int lanes = static_cast<int>(pairs - b0);
  I u{}, v{};
  for (int l = 0; l < L; ++l) u[l] = -256;  // idle lanes: U = 1, ln 1, no special values
  for (int l = 0; l < lanes; ++l) {
    u[l] = static_cast<int32_t>(words[4 * (b0 + l)]);
    v[l] = static_cast<int32_t>(words[4 * (b0 + l) + 1]);
  }
  F z0, z1;
  box_muller<L>(u, v, z0, z1);
  for (int l = 0; l < lanes; ++l) {
    z[2 * (b0 + l)] = z0[l];
    z[2 * (b0 + l) + 1] = z1[l];
  }
}

#if defined(__x86_64__)
constexpr int kBaseLanes = 8;
#else
constexpr int kBaseLanes = 4;
#endif

ZT_CLONES void gaussian_pairs_base(int64_t pairs, const uint32_t* words, float* z) {
  pairs_in_lanes<kBaseLanes>(pairs, words, z);
}

}  // namespace

void gaussian_pairs(int64_t pairs, const uint32_t* words, float* z) {
  if (const auto wide = active_kernels().gaussian_pairs) return wide(pairs, words, z);
  gaussian_pairs_base(pairs, words, z);
}

#if defined(__x86_64__)
namespace avx512 {

__attribute__((target("avx512f"))) void gaussian_pairs(int64_t pairs, const uint32_t* words,
                                                       float* z) {
  pairs_in_lanes<16>(pairs, words, z);
}

}  // namespace avx512
#endif

}  // namespace zotrain::kernels
