// The arena: every buffer a training run needs comes from here, tagged with a bucket, so that
// the bytes actually used can be reported per bucket and checked against the memory plan.
// Like TFLM's recording allocator: each allocation is a 64-byte aligned block that lives as long
// as the arena; nothing is freed earlier, so the recorded bytes are the peak.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "zotrain/core/tensor.h"

namespace zotrain {

enum class Bucket {
  kParameters,   // trainable weights and biases
  kInput,        // the input batch
  kGradients,    // gradient buffers of the layers trained by backprop
  kOptimizer,    // optimizer state (momentum)
  kActivations,  // activations kept for backprop
  kForward,      // the activations of forward-only passes (no value kept for backprop)
  kWorkspace,    // kernel scratch (im2col, ...)
  kLoss,         // logits gradient and per-row losses
  kCount
};
const char* bucket_name(Bucket b);

class Arena {
 public:
  Arena() = default;
  // An arena in a fixed region, 64-byte aligned (a device's static buffer, sized by the memory
  // plan): blocks are taken from it in order, and one that does not fit is an error naming the
  // sizes. The region outlives the arena.
  Arena(void* region, size_t bytes);
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // A zero-filled tensor of the given shape, charged to `bucket`.
  Tensor alloc(Bucket bucket, const Shape& shape);
  // Raw zero-filled bytes (64-byte aligned), charged to `bucket`.
  void* alloc_bytes(Bucket bucket, size_t bytes);

  // Bytes handed out per bucket (each allocation rounded up to the alignment).
  size_t bytes(Bucket b) const { return bytes_[static_cast<int>(b)]; }
  size_t total_bytes() const;

 private:
  std::vector<std::unique_ptr<std::byte, void (*)(void*)>> blocks_;
  std::byte* region_ = nullptr;
  size_t region_bytes_ = 0, region_used_ = 0;
  std::array<size_t, static_cast<int>(Bucket::kCount)> bytes_{};
};

}  // namespace zotrain
