#include "nn/perturbed_forward.h"

#include <algorithm>
#include <vector>

namespace zotrain {

int64_t param_elements(const Layer& l) {
  int64_t n = 0;
  for (const ParamSpec& ps : l.param_specs()) n += ps.shape.numel();
  return n;
}

namespace {

// Blocks of rows come in multiples of the GEMM kernels' tile of output columns (16), where a
// layer has that many and the room holds them: a narrower block leaves the tiles partly empty.
// Where 16 rows do not fit, half a tile (8), so that a small model's scratch stays small.
constexpr int64_t kBlockRowMultiple = 16;

}  // namespace

int64_t block_rows(const Layer& l, int64_t floats) {
  const int64_t rows = l.output_rows();
  if (rows == 0) return 0;
  const int64_t fit = floats / (param_elements(l) / rows);
  if (fit >= rows) return rows;
  const int64_t tile = fit >= kBlockRowMultiple ? kBlockRowMultiple : kBlockRowMultiple / 2;
  const int64_t multiple = std::min(rows, tile);
  return std::clamp<int64_t>(fit / multiple * multiple, multiple, rows);
}

ScratchNeed scratch_need(const Layer& l, int64_t floats) {
  const std::vector<const Layer*> children = l.children();
  if (!children.empty()) {
    ScratchNeed need;
    for (const Layer* c : children) {
      const ScratchNeed n = scratch_need(*c, floats);
      if (n.floats > need.floats) need = n;
    }
    return need;
  }
  const int64_t n = param_elements(l), rows = block_rows(l, floats);
  if (rows == 0 || rows == l.output_rows()) return {n, 0};
  return {rows * (n / l.output_rows()), rows};
}

int64_t smallest_unit(const Layer& l) {
  const std::vector<const Layer*> children = l.children();
  if (!children.empty()) {
    int64_t n = 0;
    for (const Layer* c : children) n = std::max(n, smallest_unit(*c));
    return n;
  }
  return l.output_rows() > 0 ? param_elements(l) / l.output_rows() : param_elements(l);
}

ExecContext with_written_params(const Layer& l, size_t first, ExecContext ctx) {
  if (ctx.write_params) {
    ctx.params = (*ctx.write_params)(first, l.params().size(), 0, 0);
    ctx.write_params = nullptr;
  }
  return ctx;
}

void forward_perturbed(const Layer& l, size_t first, const Tensor& x, Tensor& y,
                       const ExecContext& ctx) {
  if (!ctx.write_params) return l.forward(x, y, ctx);
  const int64_t rows = block_rows(l, ctx.scratch_floats), out = l.output_rows();
  if (rows == 0 || rows == out) {
    // A composite writes its children's as they run; any other layer takes its own whole.
    const bool composite = rows == 0 && !l.children().empty();
    return l.forward(x, y, composite ? ctx : with_written_params(l, first, ctx));
  }
  ExecContext c = ctx;
  c.write_params = nullptr;
  const size_t count = l.params().size();
  for (int64_t o0 = 0; o0 < out; o0 += rows) {
    const int64_t o1 = std::min(out, o0 + rows);
    c.params = (*ctx.write_params)(first, count, o0, o1);
    l.forward_rows(x, y, o0, o1, c);
  }
}

}  // namespace zotrain
