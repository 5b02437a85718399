// An f32 tensor: a shape and a pointer to contiguous, 64-byte aligned storage.
// A Tensor either owns its storage (Tensor::zeros) or views storage owned elsewhere (an Arena,
// another Tensor). Copies are shallow: they share the storage.
#pragma once

#include <cstddef>
#include <memory>

#include "zotrain/core/shape.h"

namespace zotrain {

inline constexpr size_t kAlignment = 64;
inline size_t align_up(size_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

class Tensor {
 public:
  Tensor() = default;
  // A view of `data` (not owned) with the given shape.
  Tensor(float* data, const Shape& shape) : data_(data), shape_(shape) {}
  // A new zero-filled tensor that owns its storage.
  static Tensor zeros(const Shape& shape);

  float* data() { return data_; }
  const float* data() const { return data_; }
  const Shape& shape() const { return shape_; }
  int64_t numel() const { return shape_.numel(); }
  size_t bytes() const { return static_cast<size_t>(numel()) * sizeof(float); }
  bool empty() const { return data_ == nullptr; }
  float& operator[](int64_t i) { return data_[i]; }
  float operator[](int64_t i) const { return data_[i]; }

  // The same storage with another shape of equal size.
  Tensor view(const Shape& shape) const;
  // Rows [begin, end) of the outermost dimension, as a view.
  Tensor rows(int64_t begin, int64_t end) const;
  // A deep copy that owns its storage.
  Tensor clone() const;
  void fill(float v);
  void copy_from(const Tensor& src);

 private:
  float* data_ = nullptr;
  Shape shape_;
  std::shared_ptr<float> owner_;
};

}  // namespace zotrain
