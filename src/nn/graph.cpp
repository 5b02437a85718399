#include "zotrain/nn/graph.h"

#include "kernels/activation.h"

namespace zotrain {

namespace {

bool is_activation(Op op) {
  return op == Op::kReLU || op == Op::kReLU6;
}

// A pattern's last layer where it matches at layer i, or -1. `pair`: whether layer i + 1 may
// join layer i's node at all.
using Pattern = int (*)(const Graph& g, int i, bool pair, const FusionRules& r);

int max_pooled(const Graph& g, int i, bool, const FusionRules& r) {
  const int n = static_cast<int>(g.ops.size());
  if (!r.max_pooled || i + 1 >= n) return -1;
  const int j = is_activation(g.ops[i + 1]) ? i + 2 : i + 1;
  if (j >= n || j >= r.end || g.ops[j] != Op::kMaxPool2d) return -1;
  if (i <= r.cut - 1 && r.cut - 1 < j) return -1;
  return r.max_pooled(i, j) ? j : -1;
}

int pool_first(const Graph& g, int i, bool pair, const FusionRules& r) {
  const bool pooling =
      pair && (g.ops[i + 1] == Op::kMaxPool2d || g.ops[i + 1] == Op::kGlobalMaxPool);
  return r.pool_first && is_activation(g.ops[i]) && pooling ? i + 1 : -1;
}

int folded_norm(const Graph& g, int i, bool pair, const FusionRules& r) {
  const bool weighted = g.ops[i] == Op::kConv2d || g.ops[i] == Op::kLinear;
  return r.fold_norm && pair && weighted && g.ops[i + 1] == Op::kBatchNorm ? i + 1 : -1;
}

int activated(const Graph& g, int i, bool pair, const FusionRules& r) {
  return r.activated && pair && is_activation(g.ops[i + 1]) && r.activated(i) ? i + 1 : -1;
}

struct Rewrite {
  GraphNode::Kind kind;
  Pattern match;
};

// In the order they are tried at each layer.
constexpr Rewrite kRewrites[] = {
    {GraphNode::kMaxPooled, max_pooled},
    {GraphNode::kPoolFirst, pool_first},
    {GraphNode::kFoldedNorm, folded_norm},
    {GraphNode::kActivated, activated},
};

}  // namespace

Graph lower(const std::vector<LayerSpec>& specs) {
  Graph g;
  for (int i = 0; i < static_cast<int>(specs.size()); ++i) {
    const LayerSpec& s = specs[i];
    GraphNode n{GraphNode::kLayer, i, i};
    if (s.op == Op::kResidual) {
      n.main = static_cast<int>(g.branches.size());
      g.branches.push_back(lower(s.main));
      if (!s.shortcut.empty()) {
        n.shortcut = static_cast<int>(g.branches.size());
        g.branches.push_back(lower(s.shortcut));
      }
    }
    g.ops.push_back(s.op);
    g.starts.push_back(i);
    g.nodes.push_back(n);
  }
  return g;
}

Graph fuse(const Graph& g, const FusionRules& r) {
  Graph out;
  out.ops = g.ops;
  out.branches = g.branches;
  const int n = static_cast<int>(g.ops.size());
  out.starts.assign(n, -1);
  for (int i = 0; i < n; ++i) {
    GraphNode node = g.nodes[g.starts[i]];
    const bool pair = i + 1 < n && i + 1 < r.end && i + 1 != r.cut;
    for (const Rewrite& w : kRewrites)
      if (const int last = w.match(g, i, pair, r); last >= 0) {
        node.kind = w.kind, node.last = last;
        break;
      }
    // A folded batch norm takes the ReLU after it into the same clamp.
    const int after = node.last + 1;
    if (node.kind == GraphNode::kFoldedNorm && after < n && after < r.end && after != r.cut &&
        is_activation(g.ops[after]))
      node.act = ++node.last;
    if (node.kind == GraphNode::kActivated) node.act = node.last;
    if (node.kind == GraphNode::kMaxPooled && node.last == i + 2) node.act = i + 1;
    out.starts[i] = static_cast<int>(out.nodes.size());
    out.nodes.push_back(node);
    i = node.last;
  }
  return out;
}

float activation_cap(Op op) {
  return op == Op::kReLU ? kernels::kNoCap : op == Op::kReLU6 ? 6.0f : 0.0f;
}

}  // namespace zotrain
