#include "zotrain/core/shape.h"

#include "zotrain/core/error.h"

namespace zotrain {

Shape::Shape(std::initializer_list<int64_t> dims) {
  ZT_ASSERT(dims.size() <= kMaxDims);
  for (int64_t d : dims) dim[rank++] = d;
}

int64_t Shape::numel() const {
  if (rank == 0) return 0;
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dim[i];
  return n;
}

int64_t Shape::row_numel() const {
  int64_t n = 1;
  for (int i = 1; i < rank; ++i) n *= dim[i];
  return n;
}

Shape Shape::with_batch(int64_t n) const {
  Shape s = *this;
  s.dim[0] = n;
  return s;
}

bool Shape::operator==(const Shape& o) const {
  if (rank != o.rank) return false;
  for (int i = 0; i < rank; ++i)
    if (dim[i] != o.dim[i]) return false;
  return true;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(dim[i]);
  return s + "]";
}

}  // namespace zotrain
