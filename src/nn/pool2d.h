// What max and average pooling share: square window, stride, floor for the output size (and
// padding, max pooling's), and threads taking blocks of the N*C planes.
#pragma once

#include <functional>

#include "zotrain/kernels/pool.h"
#include "zotrain/nn/layer.h"

namespace zotrain {

class Pool2d : public Layer {
 public:
  Pool2d(int64_t kernel, int64_t stride, int64_t pad = 0)
      : k_(kernel), stride_(stride), pad_(pad) {}

  Shape output_shape(const Shape& in) const override;
  // The windows over one plane of an input `in`.
  kernels::Pool2dGeometry geometry(const Shape& in) const;

 protected:
  // "<name> k2 s2", and " p1" when it pads.
  std::string describe_as(const char* name) const;
  // Runs fn(g, first_plane, planes) over blocks of the N*C planes of an input `in`.
  void for_plane_blocks(const Shape& in, const ExecContext& ctx,
                        const std::function<void(const kernels::Pool2dGeometry& g, int64_t first,
                                                 int64_t count)>& fn) const;

 private:
  int64_t k_, stride_, pad_;
};

}  // namespace zotrain
