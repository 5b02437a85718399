#include "zotrain/nn/graph.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "kernels/activation.h"

namespace zotrain {
namespace {

std::vector<LayerSpec> chain(std::vector<Op> ops) {
  std::vector<LayerSpec> specs;
  for (Op op : ops) specs.push_back({op});
  return specs;
}

// Every rule: convolutions with a max-pooled kernel, batch norms with a fused ReLU.
FusionRules everything(const Graph& g, int end = INT_MAX, int cut = 0) {
  FusionRules r;
  r.max_pooled = [&g](int i, int) { return g.ops[i] == Op::kConv2d; };
  r.pool_first = true;
  r.activated = [&g](int i) { return g.ops[i] == Op::kBatchNorm; };
  r.fold_norm = true;
  r.end = end, r.cut = cut;
  return r;
}

// Each node as "kind:first-last[/act]".
std::string nodes(const Graph& g) {
  static const char* kinds[] = {"layer", "max_pooled", "pool_first", "activated", "folded_norm"};
  std::ostringstream s;
  for (const GraphNode& n : g.nodes) {
    s << (&n == g.nodes.data() ? "" : " ") << kinds[n.kind] << ":" << n.first << "-" << n.last;
    if (n.act >= 0) s << "/" << n.act;
  }
  return s.str();
}

TEST(Graph, LowersEveryLayerIntoANodeAndAResidualBlockIntoItsChains) {
  LayerSpec block = LayerSpec::residual({LayerSpec::conv2d(4, 3, 1, 1), LayerSpec::relu()},
                                        {LayerSpec::conv2d(4, 1)}, true);
  LayerSpec identity = LayerSpec::residual({LayerSpec::relu()}, {}, false);
  const Graph g = lower({LayerSpec::conv2d(4, 3), block, identity, LayerSpec::flatten()});
  EXPECT_EQ(nodes(g), "layer:0-0 layer:1-1 layer:2-2 layer:3-3");
  ASSERT_EQ(g.branches.size(), 3u);
  EXPECT_EQ(g.nodes[1].main, 0);
  EXPECT_EQ(g.nodes[1].shortcut, 1);
  EXPECT_EQ(g.nodes[2].main, 2);
  EXPECT_EQ(g.nodes[2].shortcut, -1);  // the identity
  EXPECT_EQ(g.nodes[0].main, -1);
  EXPECT_EQ(nodes(g.branches[0]), "layer:0-0 layer:1-1");
  EXPECT_EQ(g.branches[1].ops, std::vector<Op>{Op::kConv2d});
}

TEST(Graph, FusesAMaxPoolingIntoTheLayerBeforeItThroughAReLU) {
  const Graph g = lower(
      chain({Op::kConv2d, Op::kReLU, Op::kMaxPool2d, Op::kConv2d, Op::kMaxPool2d, Op::kFlatten}));
  EXPECT_EQ(nodes(fuse(g, everything(g))), "max_pooled:0-2/1 max_pooled:3-4 layer:5-5");
  // Where the layer has no kernel for it, the ReLU pools first.
  FusionRules r = everything(g);
  r.max_pooled = [](int i, int j) { return i == 3 && j == 4; };
  EXPECT_EQ(nodes(fuse(g, r)), "layer:0-0 pool_first:1-2 max_pooled:3-4 layer:5-5");
  r.max_pooled = nullptr, r.pool_first = false, r.activated = nullptr;
  EXPECT_EQ(nodes(fuse(g, r)), "layer:0-0 layer:1-1 layer:2-2 layer:3-3 layer:4-4 layer:5-5");
}

TEST(Graph, PoolsFirstBeforeAGlobalMaxPoolingToo) {
  const Graph g = lower(chain({Op::kLinear, Op::kReLU, Op::kGlobalMaxPool, Op::kLinear}));
  FusionRules r = everything(g);
  r.activated = nullptr;
  EXPECT_EQ(nodes(fuse(g, r)), "layer:0-0 pool_first:1-2 layer:3-3");
}

TEST(Graph, FoldsABatchNormWithTheActivationAfterIt) {
  const Graph g = lower(chain({Op::kConv2d, Op::kBatchNorm, Op::kReLU6, Op::kLinear, Op::kBatchNorm,
                               Op::kMaxPool2d, Op::kBatchNorm, Op::kReLU}));
  FusionRules npu;
  npu.fold_norm = true;
  npu.activated = [&](int i) { return g.ops[i] == Op::kConv2d || g.ops[i] == Op::kLinear; };
  // A batch norm after anything but a convolution or linear layer stays a layer of its own.
  EXPECT_EQ(nodes(fuse(g, npu)), "folded_norm:0-2/2 folded_norm:3-4 layer:5-5 layer:6-6 layer:7-7");
  FusionRules f32;
  f32.activated = [&](int i) { return g.ops[i] == Op::kBatchNorm; };
  EXPECT_EQ(nodes(fuse(g, f32)),
            "layer:0-0 activated:1-2/2 layer:3-3 layer:4-4 layer:5-5 activated:6-7/7");
}

TEST(Graph, NoNodeReachesTheHeadOrRunsAcrossTheCut) {
  const Graph g = lower(
      chain({Op::kConv2d, Op::kReLU, Op::kMaxPool2d, Op::kBatchNorm, Op::kReLU, Op::kLinear}));
  // The head starts at the pooling: the ReLU before it stays alone, its output kept.
  EXPECT_EQ(nodes(fuse(g, everything(g, 2))),
            "layer:0-0 layer:1-1 layer:2-2 layer:3-3 layer:4-4 layer:5-5");
  EXPECT_EQ(nodes(fuse(g, everything(g, 4))), "max_pooled:0-2/1 layer:3-3 layer:4-4 layer:5-5");
  // The kept output of layer 0 (cut 1), then of layer 1 (cut 2).
  EXPECT_EQ(nodes(fuse(g, everything(g, INT_MAX, 1))),
            "layer:0-0 pool_first:1-2 activated:3-4/4 "
            "layer:5-5");
  EXPECT_EQ(nodes(fuse(g, everything(g, INT_MAX, 2))),
            "layer:0-0 layer:1-1 layer:2-2 activated:3-4/4 layer:5-5");
  // A folded norm leaves an activation across the cut alone.
  const Graph h = lower(chain({Op::kConv2d, Op::kBatchNorm, Op::kReLU, Op::kLinear}));
  EXPECT_EQ(nodes(fuse(h, everything(h, INT_MAX, 2))), "folded_norm:0-1 layer:2-2 layer:3-3");
  EXPECT_EQ(nodes(fuse(h, everything(h, INT_MAX, 3))), "folded_norm:0-2/2 layer:3-3");
}

// Random chains under random rules: the nodes cover every layer once, in order, and none
// reaches the end or runs across the cut.
TEST(Graph, NodesPartitionTheChainWithinItsBounds) {
  const Op ops[] = {Op::kConv2d,    Op::kLinear,    Op::kReLU,          Op::kReLU6,
                    Op::kMaxPool2d, Op::kBatchNorm, Op::kGlobalMaxPool, Op::kFlatten};
  std::mt19937 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<Op> c(1 + rng() % 12);
    for (Op& op : c) op = ops[rng() % std::size(ops)];
    const int n = static_cast<int>(c.size());
    const int end = 1 + static_cast<int>(rng() % (n + 1)), cut = static_cast<int>(rng() % end);
    const Graph lowered = lower(chain(c));
    FusionRules r = everything(lowered, end, cut);
    if (rng() % 2) r.max_pooled = [](int, int) { return true; };
    if (rng() % 2) r.activated = [](int) { return true; };
    const Graph g = fuse(lowered, r);
    int next = 0;
    for (const GraphNode& node : g.nodes) {
      ASSERT_EQ(node.first, next);
      ASSERT_GE(node.last, node.first);
      if (node.last > node.first) {
        EXPECT_LT(node.last, end);
        EXPECT_FALSE(node.first < cut && node.last >= cut) << trial;
      }
      EXPECT_EQ(g.starts[node.first], &node - g.nodes.data());
      EXPECT_EQ(g.last_of(node.first), node.last);
      next = node.last + 1;
    }
    EXPECT_EQ(next, n);
  }
}

TEST(Graph, ActivationCaps) {
  EXPECT_EQ(activation_cap(Op::kReLU), kernels::kNoCap);
  EXPECT_EQ(activation_cap(Op::kReLU6), 6.0f);
  EXPECT_EQ(activation_cap(Op::kMaxPool2d), 0.0f);
}

}  // namespace
}  // namespace zotrain
