// Box-Muller over vectors of 8 lanes (GCC vector types; AVX2 registers in the AVX2 clone, two
// SSE registers in the baseline one). The polynomials are Cephes' logf, sinf and cosf (about
// one ulp); the angle's range reduction is exact because a = 2 pi V with V a multiple of 2^-24:
// 4 V = n + x exactly, n an integer, x in [-1/2, 1/2), and a = n pi/2 + x pi/2. CMakeLists.txt
// compiles this file with -ffp-contract=off, so no target fuses a multiply and an add.
#include "kernels/gaussian.h"

#include <cstring>

#include "target_clones.h"

namespace zotrain::kernels {

namespace {

constexpr int kLanes = 8;
typedef float F __attribute__((vector_size(kLanes * sizeof(float))));
typedef int32_t I __attribute__((vector_size(kLanes * sizeof(int32_t))));

#define ZT_INLINE inline __attribute__((always_inline))

ZT_INLINE F splat(float s) {
  return s - F{};
}

// ln u for u in (0, 1], normal: u = m 2^e with m in [sqrt(1/2), sqrt(2)), ln u = ln m + e ln 2.
ZT_INLINE F log_unit(F u) {
  I bits;
  std::memcpy(&bits, &u, sizeof bits);
  I e = (bits >> 23) - 126;  // u = m' 2^e, m' in [1/2, 1)
  I mbits = (bits & 0x007fffff) | 0x3f000000;
  F m;
  std::memcpy(&m, &mbits, sizeof m);
  const I small = m < splat(0.707106781186547524f);  // -1 where m' < sqrt(1/2)
  e += small;                                        // then m = 2 m'
  const F x = (m + (small ? m : F{})) - splat(1.0f);
  const F ef = __builtin_convertvector(e, F);
  const F z = x * x;
  F y = splat(7.0376836292e-2f);
  y = y * x - splat(1.1514610310e-1f);
  y = y * x + splat(1.1676998740e-1f);
  y = y * x - splat(1.2420140846e-1f);
  y = y * x + splat(1.4249322787e-1f);
  y = y * x - splat(1.6668057665e-1f);
  y = y * x + splat(2.0000714765e-1f);
  y = y * x - splat(2.4999993993e-1f);
  y = y * x + splat(3.3333331174e-1f);
  y = y * x * z;
  y = y + ef * splat(-2.12194440e-4f);  // ln 2 = 0.693359375 - 2.12194440e-4, the first exact
  y = y - z * splat(0.5f);
  return (x + y) + ef * splat(0.693359375f);
}

// z0 = r cos(2 pi v), z1 = r sin(2 pi v) for v in [0, 1), a multiple of 2^-24.
ZT_INLINE void polar(F r, F v, F& z0, F& z1) {
  const F t = v * splat(4.0f);                              // exact
  const I n = __builtin_convertvector(t + splat(0.5f), I);  // nearest quadrant, 0..4
  const F x = (t - __builtin_convertvector(n, F)) * splat(1.57079632679489662f);  // |x| <= pi/4
  const F z = x * x;
  F s = splat(-1.9515295891e-4f);
  s = s * z + splat(8.3321608736e-3f);
  s = s * z - splat(1.6666654611e-1f);
  s = s * z * x + x;
  F c = splat(2.443315711809948e-5f);
  c = c * z - splat(1.388731625493765e-3f);
  c = c * z + splat(4.166664568298827e-2f);
  c = c * z * z - z * splat(0.5f) + splat(1.0f);
  // a = n pi/2 + x: odd quadrants swap sine and cosine; the signs follow the quadrant.
  const I odd = (n & 1) != 0;
  const F sin_a = odd ? c : s, cos_a = odd ? s : c;
  const I sin_neg = (n & 2) != 0, cos_neg = ((n + 1) & 2) != 0;
  z0 = r * (cos_neg ? -cos_a : cos_a);
  z1 = r * (sin_neg ? -sin_a : sin_a);
}

// Lanes of a and b picked by constant indices (b's from kLanes on): GCC's builtin and Clang's.
#if defined(__clang__)
#define ZT_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define ZT_SHUFFLE(a, b, ...) __builtin_shuffle(a, b, I{__VA_ARGS__})
#endif

// The words u (word 0) and v (word 1) of 8 consecutive blocks, from the 32 words they span:
// vector shuffles, not lane stores (which stall the vector loads after them).
ZT_INLINE void unit_words(const uint32_t* words, I& u, I& v) {
  I a, b, c, d;
  std::memcpy(&a, words, sizeof a);
  std::memcpy(&b, words + 8, sizeof b);
  std::memcpy(&c, words + 16, sizeof c);
  std::memcpy(&d, words + 24, sizeof d);
  const I ab = ZT_SHUFFLE(a, b, 0, 4, 8, 12, 1, 5, 9, 13);  // u0..u3, v0..v3
  const I cd = ZT_SHUFFLE(c, d, 0, 4, 8, 12, 1, 5, 9, 13);  // u4..u7, v4..v7
  u = ZT_SHUFFLE(ab, cd, 0, 1, 2, 3, 8, 9, 10, 11);
  v = ZT_SHUFFLE(ab, cd, 4, 5, 6, 7, 12, 13, 14, 15);
}

// z0 = r cos a, z1 = r sin a of the pairs whose words u and v are in the lanes of uw and vw.
ZT_INLINE void box_muller(const I& uw, const I& vw, F& z0, F& z1) {
  typedef uint32_t U __attribute__((vector_size(kLanes * sizeof(uint32_t))));
  const U ub = reinterpret_cast<U>(uw) >> 8, vb = reinterpret_cast<U>(vw) >> 8;
  // Below 2^24 + 1, so the conversions from int32 are exact.
  const F u = __builtin_convertvector(reinterpret_cast<I>(ub + 1), F) * splat(0x1p-24f);
  const F v = __builtin_convertvector(reinterpret_cast<I>(vb), F) * splat(0x1p-24f);
  F r = splat(-2.0f) * log_unit(u);
  for (int l = 0; l < kLanes; ++l) r[l] = __builtin_sqrtf(r[l]);
  polar(r, v, z0, z1);
}

// The values of kLanes pairs from their 4 kLanes words, into 2 kLanes floats of z.
ZT_INLINE void full_lanes(const uint32_t* words, float* z) {
  I u, v;
  unit_words(words, u, v);
  F z0, z1;
  box_muller(u, v, z0, z1);
  const F lo = ZT_SHUFFLE(z0, z1, 0, 8, 1, 9, 2, 10, 3, 11);
  const F hi = ZT_SHUFFLE(z0, z1, 4, 12, 5, 13, 6, 14, 7, 15);
  std::memcpy(z, &lo, sizeof lo);
  std::memcpy(z + kLanes, &hi, sizeof hi);
}

}  // namespace

ZT_CLONES void gaussian_pairs(int64_t pairs, const uint32_t* words, float* z) {
  int64_t b0 = 0;
  for (; b0 + kLanes <= pairs; b0 += kLanes) full_lanes(words + 4 * b0, z + 2 * b0);
  if (b0 == pairs) return;
  const int lanes = static_cast<int>(pairs - b0);
  I u{}, v{};
  for (int l = 0; l < kLanes; ++l) u[l] = -256;  // idle lanes: U = 1, ln 1, no special values
  for (int l = 0; l < lanes; ++l) {
    u[l] = static_cast<int32_t>(words[4 * (b0 + l)]);
    v[l] = static_cast<int32_t>(words[4 * (b0 + l) + 1]);
  }
  F z0, z1;
  box_muller(u, v, z0, z1);
  for (int l = 0; l < lanes; ++l) {
    z[2 * (b0 + l)] = z0[l];
    z[2 * (b0 + l) + 1] = z1[l];
  }
}

}  // namespace zotrain::kernels
