#include "zotrain/core/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "zotrain/core/error.h"

namespace zotrain {

Tensor Tensor::zeros(const Shape& shape) {
  size_t bytes = align_up(static_cast<size_t>(shape.numel()) * sizeof(float));
  void* p = ::aligned_alloc(kAlignment, bytes ? bytes : kAlignment);
  if (!p) ZT_THROW(std::bad_alloc());
  std::memset(p, 0, bytes);
  Tensor t(static_cast<float*>(p), shape);
  t.owner_.reset(static_cast<float*>(p), [](float* q) { std::free(q); });
  return t;
}

Tensor Tensor::view(const Shape& shape) const {
  ZT_ASSERT(shape.numel() == numel());
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::rows(int64_t begin, int64_t end) const {
  ZT_ASSERT(0 <= begin && begin <= end && end <= shape_[0]);
  Tensor t = *this;
  t.data_ = data_ + begin * shape_.row_numel();
  t.shape_[0] = end - begin;
  return t;
}

Tensor Tensor::clone() const {
  Tensor t = zeros(shape_);
  t.copy_from(*this);
  return t;
}

void Tensor::fill(float v) {
  for (int64_t i = 0, n = numel(); i < n; ++i) data_[i] = v;
}

void Tensor::copy_from(const Tensor& src) {
  ZT_ASSERT(src.numel() == numel());
  if (numel()) std::memcpy(data_, src.data_, bytes());
}

}  // namespace zotrain
