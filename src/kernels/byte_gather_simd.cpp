// gather_bytes (byte_gather.h) on 16-byte vectors: a window is one load and one table lookup
// (x86 pshufb, AArch64 tbl), whose out-of-range indices give zeros as the plan's 0x80 asks. The
// same loop for both, moving the portable kernel's bytes.
#include <cstring>

#include "kernels/byte_gather.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "avx2_target.h"
#include "int8_avx2.h"
#define ZT_GATHER_NS avx2
#define ZT_GATHER ZT_AVX2
#define ZT_GATHER_INLINE ZT_AVX2_INLINE
#elif defined(__aarch64__)
#include <arm_neon.h>

#include "neon.h"
#define ZT_GATHER_NS neon
#define ZT_GATHER
#define ZT_GATHER_INLINE inline __attribute__((always_inline))
#endif

#if defined(ZT_GATHER_NS)

namespace zotrain::kernels::ZT_GATHER_NS {

namespace {

using Bytes16 = uint8_t __attribute__((vector_size(16)));

ZT_GATHER_INLINE Bytes16 window(const int8_t* src, const uint8_t* index) {
#if defined(__x86_64__)
  return reinterpret_cast<Bytes16>(
      _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)),
                       _mm_load_si128(reinterpret_cast<const __m128i*>(index))));
#else
  return reinterpret_cast<Bytes16>(
      vqtbl1q_u8(vld1q_u8(reinterpret_cast<const uint8_t*>(src)), vld1q_u8(index)));
#endif
}

// The chunks of one plane, K windows each (0: chunks.per_chunk).
template <int K>
ZT_GATHER_INLINE void gather_plane(const ByteChunks& chunks, const int8_t* src, int8_t* dst) {
  const int per_chunk = K > 0 ? K : chunks.per_chunk;
  const ByteWindow* w = chunks.windows.data();
  const ByteWindow* const end = w + chunks.windows.size();
  for (; w < end; w += per_chunk) {
    Bytes16 chunk = window(src + w[0].src, w[0].index);
    for (int k = 1; k < per_chunk; ++k) chunk |= window(src + w[k].src, w[k].index);
    if (chunks.bytes == 16) {
      std::memcpy(dst + w[0].dst, &chunk, 16);
    } else {
      uint8_t lanes[16];
      std::memcpy(lanes, &chunk, 16);
      std::memcpy(dst + w[0].dst, lanes, static_cast<size_t>(chunks.bytes));
    }
  }
}

template <int K>
ZT_GATHER_INLINE void gather_planes(const ByteChunks& chunks, int64_t planes, const int8_t* src,
                                    int64_t src_stride, int8_t* dst, int64_t dst_stride) {
  for (int64_t i = 0; i < planes; ++i)
    gather_plane<K>(chunks, src + i * src_stride, dst + i * dst_stride);
}

}  // namespace

ZT_GATHER void gather_bytes(const ByteChunks& chunks, int64_t planes, const int8_t* src,
                            int64_t src_stride, int8_t* dst, int64_t dst_stride) {
  // The common numbers of windows a chunk, unrolled.
  switch (chunks.per_chunk) {
    case 1:
      return gather_planes<1>(chunks, planes, src, src_stride, dst, dst_stride);
    case 2:
      return gather_planes<2>(chunks, planes, src, src_stride, dst, dst_stride);
    case 3:
      return gather_planes<3>(chunks, planes, src, src_stride, dst, dst_stride);
    case 4:
      return gather_planes<4>(chunks, planes, src, src_stride, dst, dst_stride);
    default:
      return gather_planes<0>(chunks, planes, src, src_stride, dst, dst_stride);
  }
}

}  // namespace zotrain::kernels::ZT_GATHER_NS

#endif
