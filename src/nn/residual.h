// A residual block, y = post(main(x) + shortcut(x)): ResNet's basic block (post = ReLU, shortcut
// the identity or a strided 1x1 convolution with batch norm) and MobileNetV2's inverted residual
// (no post, identity shortcut). It is one layer of the Network, so the network stays a sequence
// (memory plan, body/head split and zeroth-order perturbation work on it unchanged), and it runs
// its children itself.
//
// Parameters and state are the children's, in order (main, then shortcut), named
// "main.<i>.<name>" and "shortcut.<i>.<name>"; a forward pass given ctx.params hands each child its
// slice of them. A training forward given ctx.kept (a head block) writes every child's output
// there, which its backward reads (with ctx.recompute_kept the head's blocks share that buffer,
// and backward runs the forward again first); any other forward keeps no internal activation:
// main's layers alternate between two workspace buffers (the last writes y) and so do the
// shortcut's.
#pragma once

#include <memory>

#include "zotrain/nn/layer_spec.h"

namespace zotrain {

class Residual : public Layer {
 public:
  // Builds the children on `in`; InputError when main is empty or main and shortcut disagree on
  // the output shape.
  Residual(const LayerSpec& spec, const Shape& in);

  // "residual [conv2d 16->16 k3 s1 p1, batch_norm 16, relu, ...] + identity, relu"
  std::string describe() const override;
  Shape output_shape(const Shape& in) const override { return out_.with_batch(in[0]); }
  std::vector<ParamSpec> param_specs() const override;
  std::vector<ParamSpec> state_specs() const override;
  // Backward: the children's workspace, the post's gradient and two ping-pong buffers for the
  // gradients inside the block.
  size_t workspace_floats(const Shape& in, int threads) const override;
  // Forward: the children's workspace and their outputs, placed by lifetime.
  size_t forward_workspace_floats(const Shape& in, int threads) const override;
  // The post ReLU's gradient is read off y.
  bool backward_needs_output() const override { return post_ != nullptr; }
  int64_t forward_macs(const Shape& in) const override;
  // The children's, one after the other.
  size_t kept_stats_doubles(const Shape&) const override { return kept_stats_; }
  // Every child's output but a fused pair's first (Layer::backward_relu reads neither).
  size_t kept_floats(const Shape& in) const override;
  std::vector<const Layer*> children() const override;
  void forward(const Tensor& x, Tensor& y, const ExecContext& ctx) const override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx,
                const ExecContext& ctx) override;
  void bind(std::vector<Tensor> params, std::vector<Tensor> grads) override;
  void bind_state(std::vector<Tensor> state) override;

 private:
  struct Child {
    std::unique_ptr<Layer> layer;
    std::string name;                         // "main.0"
    Shape in, out;                            // batch 1
    size_t first_param = 0, first_state = 0;  // index of the child's first tensor in the block's
    size_t first_stats = 0;                   // offset of its kept statistics in the block's
    float relu_fused = 0;  // the cap of the ReLU after it run in its passes (0: none)
  };
  // Offsets (floats) of the buffers in the workspace for a batch.
  struct Layout {
    std::vector<size_t> out;  // forward: the output of each child (unused: main's last, y)
    std::vector<size_t>
        kept;  // the output of each child in ctx.kept (unused: a fused pair's first)
    size_t post_grad, back[2];  // backward
    size_t forward_end, backward_end, kept_end;
  };
  Layout layout(const Shape& in, int threads) const;
  // The children's param_specs or state_specs, each name prefixed by the child's.
  std::vector<ParamSpec> prefixed(std::vector<ParamSpec> (Layer::*specs)() const) const;
  ExecContext child_context(const ExecContext& ctx, size_t i) const;
  // Runs main and shortcut on x, child i writing out[i]; a batch norm and the ReLU after it run
  // as one pass (Layer::forward_relu) that writes only the ReLU's out[i + 1].
  void run_children(const Tensor& x, const std::vector<float*>& out, const ExecContext& ctx) const;
  // Backprops children [begin, end) (one chain) from dy, their outputs in out, a fused pair in
  // one step (Layer::backward_relu); the first child writes dx (if not empty, and it may be
  // back[0]), the others alternate between back[0] and back[1].
  void backward_chain(size_t begin, size_t end, const Tensor& x, const std::vector<float*>& out,
                      const Tensor& dy, Tensor& dx, float* const back[2], const ExecContext& ctx);
  // y = a + b (y may be a), row blocks in parallel.
  static void add(Tensor& y, const Tensor& a, const Tensor& b, const ExecContext& ctx);

  std::vector<Child> children_;  // main, then shortcut
  size_t num_main_ = 0;
  std::unique_ptr<Layer> post_;  // null: none
  Shape out_;                    // batch 1
  size_t kept_stats_ = 0;        // the children's kept statistics, one after the other
};

}  // namespace zotrain
