// Internal to src/kernels: the register tiles of the int8 product C (+)= A · B^T, written once
// for every instruction set's vectors: 3 x 4 dot products, each a vector of int32 partial sums
// along k. The including file (gemm_s8_x86.h for AVX2 and AVX-512 VNNI, gemm_s8_neon.h for NEON
// with and without the dot-product instructions) first defines, in namespace ZT_S8_NS:
//   Sums                      a vector of int32 partial sums;
//   Sums acc_zero()           its zero;
//   void store_sums(const Sums (&acc)[4], int32_t* out)   out[j] = the sum of acc[j]'s lanes;
//   struct Widened           the product step exact for every int8 pair, on 16 bytes of k
//                            (kStep = 16) and on 8 (load<8>: 8 bytes and zeros above them);
// and may define faster steps of its own (a struct with kStep, load<kStep> and dot) for
// dot_tile and gemm_nt, with a Tail (a loader of the last part-filled step under a mask) where
// the instruction set has masked loads. Integer sums are exact in
// any order, so every build gives the portable kernel's bits (tests/kernels/int8_test.cpp runs
// every set the CPU supports).
#pragma once

#include <cstdint>

namespace zotrain::kernels::ZT_S8_NS {
namespace {

constexpr int kRowsA = 3, kRowsB = 4;  // a tile: 12 accumulators, 3 A vectors, a B vector

// One step along k: P's vectors of a[i] and b[j] from `load` (a Whole step or P's Tail),
// multiplied into acc[i][j].
template <class P, int K>
struct Whole {
  int64_t p;
  ZT_S8_INLINE auto operator()(const int8_t* x) const { return P::template load<K>(x + p); }
};

template <class P, int RA, class Load, class S>
ZT_S8_INLINE void dot_step(const int8_t* const (&a)[RA], const int8_t* const (&b)[kRowsB],
                           Load load, S (&acc)[RA][kRowsB]) {
  decltype(load(a[0])) av[RA];
#pragma GCC unroll 4
  for (int i = 0; i < RA; ++i) av[i] = load(a[i]);
#pragma GCC unroll 4
  for (int j = 0; j < kRowsB; ++j) {
    const auto bv = load(b[j]);
#pragma GCC unroll 4
    for (int i = 0; i < RA; ++i) acc[i][j] = P::dot(acc[i][j], av[i], bv);
  }
}

// C[i][j] for the RA x kRowsB rows a[i], b[j]: vector partial sums along k (P's whole steps,
// then the rest: under a mask where P has a Tail, whose loads read zeros past k; otherwise in
// Widened's steps of 16 and 8, whose part-filled vectors cost fewer multiplies than a wider step's
// would, and the last k % 8 products after the lanes are added). Columns past n are given as
// copies of the last one, and their results dropped.
template <class P, int RA>
ZT_S8 void dot_tile(int64_t k, const int8_t* const (&a)[RA], const int8_t* const (&b)[kRowsB],
                    int32_t (&out)[RA][kRowsB]) {
  Sums acc[RA][kRowsB];
#pragma GCC unroll 4
  for (int i = 0; i < RA; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < kRowsB; ++j) acc[i][j] = acc_zero();
  int64_t p = 0;
  for (; p + P::kStep <= k; p += P::kStep) dot_step<P, RA>(a, b, Whole<P, P::kStep>{p}, acc);
  if constexpr (requires { typename P::Tail; }) {
    if (p < k) dot_step<P, RA>(a, b, typename P::Tail(p, k - p), acc), p = k;
  } else {
    for (; p + 16 <= k; p += 16) dot_step<Widened, RA>(a, b, Whole<Widened, 16>{p}, acc);
    if (p + 8 <= k) dot_step<Widened, RA>(a, b, Whole<Widened, 8>{p}, acc), p += 8;
  }
#pragma GCC unroll 4
  for (int i = 0; i < RA; ++i) {
    store_sums(acc[i], out[i]);
    for (int j = 0; j < kRowsB; ++j)
      for (int64_t q = p; q < k; ++q) out[i][j] += a[i][q] * b[j][q];
  }
}

// The rows [i0, i0 + RA) of C (+)= A · B^T with C's element (i, j) at c + i * ci + j * cj.
template <class P, int RA>
ZT_S8 void gemm_nt_rows(int64_t i0, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                        const int8_t* b, int64_t ldb, int32_t* c, int64_t ci, int64_t cj,
                        bool accumulate) {
  const int8_t* ar[RA];
  for (int i = 0; i < RA; ++i) ar[i] = a + (i0 + i) * lda;
  for (int64_t j0 = 0; j0 < n; j0 += kRowsB) {
    const int8_t* br[kRowsB];
    for (int j = 0; j < kRowsB; ++j) br[j] = b + (j0 + j < n ? j0 + j : n - 1) * ldb;
    int32_t out[RA][kRowsB];
    dot_tile<P, RA>(k, ar, br, out);
    for (int64_t i = 0; i < RA; ++i)
      for (int64_t j = 0; j < kRowsB && j0 + j < n; ++j) {
        int32_t& cij = c[(i0 + i) * ci + (j0 + j) * cj];
        cij = accumulate ? cij + out[i][j] : out[i][j];
      }
  }
}

// C (+)= A · B^T with C's element (i, j) at c + i * ci + j * cj, so that C^T = B · A^T can be
// written through the same tiles; the last m % kRowsA rows by tiles of their own height (a batch
// of one image is one row).
template <class P>
ZT_S8 void gemm_nt(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int8_t* b,
                   int64_t ldb, int32_t* c, int64_t ci, int64_t cj, bool accumulate) {
  static_assert(kRowsA == 3, "gemm_nt's edge covers 1 and 2 rows");
  int64_t i0 = 0;
  for (; i0 + kRowsA <= m; i0 += kRowsA)
    gemm_nt_rows<P, kRowsA>(i0, n, k, a, lda, b, ldb, c, ci, cj, accumulate);
  if (m - i0 == 2) gemm_nt_rows<P, 2>(i0, n, k, a, lda, b, ldb, c, ci, cj, accumulate);
  if (m - i0 == 1) gemm_nt_rows<P, 1>(i0, n, k, a, lda, b, ldb, c, ci, cj, accumulate);
}

}  // namespace
}  // namespace zotrain::kernels::ZT_S8_NS
