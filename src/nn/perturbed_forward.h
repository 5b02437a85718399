// A perturbed pass's forward of one layer, with its parameters written into a scratch only as
// it reads them: a layer that runs its output features apart (Layer::forward_rows) one block of
// rows at a time, a composite layer one child at a time, any other whole. The scratch holds the
// largest of these units, not the layer.
#pragma once

#include <cstdint>

#include "zotrain/nn/layer.h"

namespace zotrain {

// The floats of all of l's parameter tensors.
int64_t param_elements(const Layer& l);

// Rows of each block for layer l (not composite) with `floats` of scratch: 0 if l runs whole,
// else at least 8 (and output_rows() where the whole layer fits).
int64_t block_rows(const Layer& l, int64_t floats);

// What a scratch of room `floats` must hold for layer l's pass: the floats of its largest unit,
// and that unit's rows per block (0: whole).
struct ScratchNeed {
  int64_t floats = 0, rows = 0;
};
ScratchNeed scratch_need(const Layer& l, int64_t floats);
// The floats of l's largest unit that cannot be made smaller: a whole layer that runs whole,
// one row of a layer that runs in blocks.
int64_t smallest_unit(const Layer& l);

// l.forward(x, y) where ctx.params come from ctx.write_params (l's parameters start at the
// writer's tensor `first`); plain l.forward if ctx.write_params is null.
void forward_perturbed(const Layer& l, size_t first, const Tensor& x, Tensor& y,
                       const ExecContext& ctx);
// ctx with l's whole parameters written, for a pass that cannot split l (a fused one).
ExecContext with_written_params(const Layer& l, size_t first, ExecContext ctx);

}  // namespace zotrain
