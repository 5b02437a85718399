// Model parameters in a TensorFile: one tensor per parameter, named "param/<layer>.<name>", and
// one per state tensor (batch norm's running statistics), "state/<layer>.<name>".
#pragma once

#include <string>

#include "zotrain/core/tensor_file.h"
#include "zotrain/nn/network.h"

namespace zotrain {

void append_params(TensorFile& file, const Network& net);
// Copies every parameter and state tensor of `net` from `file`; InputError naming `path` and the
// tensor when one is missing or has another shape (a checkpoint of another model).
void restore_params(const TensorFile& file, const std::string& path, Network& net);

}  // namespace zotrain
