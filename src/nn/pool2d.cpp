#include "nn/pool2d.h"

#include "zotrain/core/error.h"

namespace zotrain {

kernels::Pool2dGeometry Pool2d::geometry(const Shape& in) const {
  ZT_ASSERT(in.rank == 4);
  return kernels::Pool2dGeometry::make(in[2], in[3], k_, stride_, pad_);
}

Shape Pool2d::output_shape(const Shape& in) const {
  auto g = geometry(in);
  return Shape{in[0], in[1], g.out_h, g.out_w};
}

std::string Pool2d::describe_as(const char* name) const {
  return std::string(name) + " k" + std::to_string(k_) + " s" + std::to_string(stride_) +
         (pad_ ? " p" + std::to_string(pad_) : "");
}

void Pool2d::for_plane_blocks(
    const Shape& in, const ExecContext& ctx,
    const std::function<void(const kernels::Pool2dGeometry&, int64_t, int64_t)>& fn) const {
  const auto g = geometry(in);
  parallel_for(ctx.pool, in[0] * in[1], [&](int64_t p0, int64_t p1) { fn(g, p0, p1 - p0); });
}

}  // namespace zotrain
