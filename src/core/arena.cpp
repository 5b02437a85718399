#include "zotrain/core/arena.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "zotrain/core/error.h"

namespace zotrain {

const char* bucket_name(Bucket b) {
  switch (b) {
    case Bucket::kParameters:
      return "parameters";
    case Bucket::kInput:
      return "input";
    case Bucket::kGradients:
      return "gradients";
    case Bucket::kOptimizer:
      return "optimizer";
    case Bucket::kActivations:
      return "activations";
    case Bucket::kForward:
      return "forward";
    case Bucket::kWorkspace:
      return "workspace";
    case Bucket::kLoss:
      return "loss";
    case Bucket::kCount:
      break;
  }
  return "?";
}

Arena::Arena(void* region, size_t bytes)
    : region_(static_cast<std::byte*>(region)), region_bytes_(bytes) {
  ZT_ASSERT(reinterpret_cast<uintptr_t>(region) % kAlignment == 0);
}

void* Arena::alloc_bytes(Bucket bucket, size_t bytes) {
  size_t n = align_up(bytes ? bytes : 1);
  void* p;
  if (region_) {
    if (n > region_bytes_ - region_used_)
      ZT_THROW(RuntimeError("the arena's region of " + std::to_string(region_bytes_) +
                            " bytes is full: " + std::to_string(n) + " more bytes for " +
                            bucket_name(bucket) + " after " + std::to_string(region_used_)));
    p = region_ + region_used_;
    region_used_ += n;
  } else {
    // The C function: newlib's C++ library does not declare std::aligned_alloc.
    p = ::aligned_alloc(kAlignment, n);
    if (!p) ZT_THROW(std::bad_alloc());
    blocks_.emplace_back(static_cast<std::byte*>(p), std::free);
  }
  std::memset(p, 0, n);
  bytes_[static_cast<int>(bucket)] += n;
  return p;
}

Tensor Arena::alloc(Bucket bucket, const Shape& shape) {
  return Tensor(static_cast<float*>(alloc_bytes(bucket, shape.numel() * sizeof(float))), shape);
}

size_t Arena::total_bytes() const {
  size_t t = 0;
  for (size_t b : bytes_) t += b;
  return t;
}

}  // namespace zotrain
