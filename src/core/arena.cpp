#include "zotrain/core/arena.h"

#include <cstdlib>
#include <cstring>
#include <new>

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

void* Arena::alloc_bytes(Bucket bucket, size_t bytes) {
  size_t n = align_up(bytes ? bytes : 1);
  void* p = std::aligned_alloc(kAlignment, n);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, n);
  blocks_.emplace_back(static_cast<std::byte*>(p), std::free);
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
