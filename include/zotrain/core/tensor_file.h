// The one file format for models and checkpoints: a metadata string (JSON, written by the
// caller), named f32 tensors, and a CRC-32 over everything. Written atomically (temp file,
// fsync, rename), so a crash leaves either the old file or the new one, never half of one.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "zotrain/core/tensor.h"

namespace zotrain {

struct TensorFile {
  std::string meta;
  std::vector<std::pair<std::string, Tensor>> tensors;

  // The tensor called `name`, or null when the file has none (optional state).
  const Tensor* find(const std::string& name) const;
  // The tensor called `name`; InputError naming `path` when it is absent or has another shape.
  const Tensor& get(const std::string& name, const Shape& expected, const std::string& path) const;
};

void write_tensor_file(const std::string& path, const TensorFile& file);
// Writes `bytes` to `path` through a temporary file, fsync and rename: a reader sees the old
// file or the whole new one. RuntimeError naming the file when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& bytes);
// InputError naming the path when the file is missing, truncated, not a zotrain file or fails
// its checksum.
TensorFile read_tensor_file(const std::string& path);

}  // namespace zotrain
