// A model description lowered once into a graph of nodes, and the one rewrite pass that makes
// the fused node kinds every precision runs (docs/design.md, "One lowered graph"). The f32
// network, the NITI int8 network, a residual block's chains and the int8-npu program read
// their fusions from here; each says only what its kernels can run fused (FusionRules), so a
// pattern is written once and no engine looks at its neighbours at run time.
#pragma once

#include <climits>
#include <functional>
#include <vector>

#include "zotrain/nn/layer_spec.h"

namespace zotrain {

struct GraphNode {
  enum Kind {
    kLayer,       // one layer
    kMaxPooled,   // a layer writing its max-pooled output; a ReLU between runs on the pooled
    kPoolFirst,   // a ReLU and the max pooling after it: pooling first (the two commute)
    kActivated,   // a layer with the ReLU/ReLU6 after it in its pass
    kFoldedNorm,  // a convolution or linear layer with the batch norm after it folded in
  };
  Kind kind = kLayer;
  int first = 0, last = 0;  // the layers of its chain the node runs, [first, last]
  int act = -1;             // the ReLU/ReLU6 it runs (kActivated, kFoldedNorm), or -1
  // A residual block's layer: its main and shortcut chains in Graph::branches (-1: the
  // identity shortcut), summed by the block; -1 elsewhere.
  int main = -1, shortcut = -1;
};

// One chain of layers (a model, or a residual block's main or shortcut) and its nodes, in
// order, each layer in exactly one.
struct Graph {
  std::vector<Op> ops;  // ops[i]: layer i's
  std::vector<GraphNode> nodes;
  std::vector<int> starts;      // starts[i]: the node that starts at layer i, or -1
  std::vector<Graph> branches;  // the residual blocks' chains, lowered the same way

  // The last layer and the kind of the node that starts at layer i; i itself and kLayer inside
  // a node.
  int last_of(int i) const { return starts[i] >= 0 ? nodes[starts[i]].last : i; }
  GraphNode::Kind kind_at(int i) const {
    return starts[i] >= 0 ? nodes[starts[i]].kind : GraphNode::kLayer;
  }
  const GraphNode& node_at(int i) const { return nodes[starts[i]]; }
};

// Every layer a node of its own kind kLayer; a residual block's chains lowered into branches.
Graph lower(const std::vector<LayerSpec>& specs);

// What a precision's kernels can run fused, and where a fused node may not reach.
struct FusionRules {
  // Whether layer i has a kernel writing the max pooling at layer j (right after it, or after
  // the ReLU after it); null: no kMaxPooled nodes.
  std::function<bool(int i, int j)> max_pooled;
  bool pool_first = false;
  // Whether layer i's pass can apply the ReLU/ReLU6 after it; null: no kActivated nodes.
  std::function<bool(int i)> activated;
  bool fold_norm = false;
  int end = INT_MAX;  // nodes end before this layer (the head: backward reads every output)
  int cut = 0;        // no node runs across the output of layer cut - 1 (a kept prefix's)
};

// The graph with its layers grouped: one scan from the first layer, taking at each the first
// kind of kMaxPooled, kPoolFirst, kFoldedNorm, kActivated whose pattern matches there and
// whose rule allows it. A node's result is its layers' run one by one, bit for bit. Branches
// are left as lowered (a residual block fuses its chains with its own rules).
Graph fuse(const Graph& g, const FusionRules& rules);

// The cap of a ReLU (kernels::kNoCap) or ReLU6 (6); 0 for any other op.
float activation_cap(Op op);

}  // namespace zotrain
