// 2-D convolution layer over NCHW inputs: weight [out, in / groups, k, k], bias [out] (optional),
// square kernel, stride, zero padding, and channel groups: output channel o sees only the input
// channels of its group, o / (out / groups); groups == in == out is a depthwise convolution. The
// kernels (kernels/conv2d.h) run one group at a time and take their scratch from the workspace, one
// slice per thread.
#pragma once

#include "kernels/conv2d.h"
#include "zotrain/nn/layer.h"

namespace zotrain {

class Conv2d : public Layer {
 public:
  // groups must divide in_channels and out_channels.
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride, int64_t pad,
         int64_t groups = 1, bool bias = true)
      : in_(in_channels),
        out_(out_channels),
        k_(kernel),
        stride_(stride),
        pad_(pad),
        groups_(groups),
        bias_(bias) {}

  std::string describe() const override;
  Shape output_shape(const Shape& in) const override;
  std::vector<ParamSpec> param_specs() const override;
  // One slice per thread, as large as the largest scratch of the three kernels.
  size_t workspace_floats(const Shape& in, int threads) const override;
  int64_t forward_macs(const Shape& in) const override;
  // Ungrouped convolutions only.
  size_t max_pooled_workspace_floats(const Shape& in, const kernels::Pool2dGeometry& pool,
                                     int threads) const override;
  void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const override;
  // Output channels in blocks: ungrouped convolutions only.
  int64_t output_rows() const override { return groups_ == 1 ? out_ : 0; }
  void forward_rows(const Tensor& x, Tensor& y, int64_t o0, int64_t o1,
                    const ExecContext& ctx) const override;
  void forward_max_pooled(const Tensor& x, const kernels::Pool2dGeometry& pool, Tensor& y,
                          const ExecContext& ctx) const override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                const ExecContext& ctx) override;

 private:
  // The convolution of one group.
  kernels::Conv2dGeometry geometry(const Shape& in) const;
  static int64_t thread_workspace(const kernels::Conv2dGeometry& g);
  // forward_max_pooled's images per block, and its scratch per thread.
  static int64_t pooled_block_images(const kernels::Conv2dGeometry& g);
  static int64_t pooled_thread_workspace(const kernels::Conv2dGeometry& g);
  int64_t units(int64_t batch) const;
  template <class Call>
  void for_each_block(int64_t u0, int64_t u1, Call call) const;
  int64_t group_run(const kernels::Conv2dGeometry& g) const;
  template <class Call>
  void for_each_group_run(int64_t u0, int64_t u1, int64_t run, Call call) const;

  int64_t in_, out_, k_, stride_, pad_, groups_;
  bool bias_;
};

}  // namespace zotrain
