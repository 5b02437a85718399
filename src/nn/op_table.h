// Every op of a LayerSpec, one row each: its name and how each precision builds it. Adding an
// op is its enumerator, a row here (op_table.cpp: a missing or misplaced row fails to compile)
// and one layer file per precision, plus its lowering in the NPU program (nn/npu).
#pragma once

#include <memory>

#include "zotrain/nn/int8/qlayer.h"
#include "zotrain/nn/layer.h"
#include "zotrain/nn/layer_spec.h"

namespace zotrain {

struct OpRow {
  Op op;
  const char* name;
  // The f32 layer for `spec` on input `in` (batch included); InputError when it does not fit.
  std::unique_ptr<Layer> (*f32)(const LayerSpec& spec, const Shape& in);
  // The NITI int8 layer, or null where there is none: then `no_int8` ends the error that says
  // so ("layer <name> has no integer (int8) path<no_int8>"); null for "; use --precision f32".
  std::unique_ptr<QLayer> (*int8)(const LayerSpec& spec, const Shape& in);
  const char* no_int8;
};

const OpRow& op_row(Op op);

}  // namespace zotrain
