#include "nn/npu/npu_network.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/memory_planner.h"
#include "nn/batch_norm.h"
#include "zo/ternary.h"
#include "zotrain/core/error.h"

namespace zotrain {

namespace {

// The float convolution of the folded program, structured like kernels::conv_s8.
void conv_f32(const kernels::NpuConvGeometry& g, int64_t rows, const float* x, const float* w,
              const float* bias, float* y, std::vector<float>& col) {
  const int64_t cg = g.in_c / g.groups, og = g.out_c / g.groups;
  const int64_t oh = g.out_h(), ow = g.out_w(), positions = oh * ow;
  const int64_t kk_count = cg * g.kernel * g.kernel, k = g.kernel;
  col.resize(static_cast<size_t>(kk_count * positions));
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const float* xg = x + (n * g.in_c + grp * cg) * g.in_h * g.in_w;
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t ky = 0; ky < k; ++ky)
          for (int64_t kx = 0; kx < k; ++kx)
            for (int64_t oy = 0; oy < oh; ++oy)
              for (int64_t ox = 0; ox < ow; ++ox) {
                const int64_t iy = oy * g.stride - g.pad + ky, ix = ox * g.stride - g.pad + kx;
                const bool inside = iy >= 0 && iy < g.in_h && ix >= 0 && ix < g.in_w;
                col[((c * k + ky) * k + kx) * positions + oy * ow + ox] =
                    inside ? xg[(c * g.in_h + iy) * g.in_w + ix] : 0.0f;
              }
      for (int64_t o = grp * og; o < (grp + 1) * og; ++o) {
        float* out = y + (n * g.out_c + o) * positions;
        std::fill_n(out, positions, bias ? bias[o] : 0.0f);
        for (int64_t kk = 0; kk < kk_count; ++kk) {
          const float wv = w[o * kk_count + kk];
          const float* c = col.data() + kk * positions;
          for (int64_t j = 0; j < positions; ++j) out[j] += wv * c[j];
        }
      }
    }
}

// The scale of a tensor whose largest magnitude is `max` (an all-zero tensor: any scale).
float scale_for(double max) {
  return max > 0 ? static_cast<float>(max / 127) : 1.0f;
}

}  // namespace

int NpuNetwork::add_value(int64_t c, int64_t h, int64_t w) {
  Value v;
  v.c = c, v.h = h, v.w = w;
  values_.push_back(std::move(v));
  return static_cast<int>(values_.size()) - 1;
}

NpuNetwork::NpuNetwork(const Network& net, int64_t batch, ThreadPool* pool, int start)
    : batch_(batch), num_layers_(net.num_layers()), start_(start) {
  ZT_ASSERT(start >= -1 && start < net.num_layers());
  ZT_ASSERT(batch >= 1, "NPU network: batch " + std::to_string(batch) + " is not >= 1");
  ZT_ASSERT(net.batch() > 0, "NPU network: the f32 network is not allocated");
  const Shape item = net.item_shape();
  if (item.rank == 3)
    add_value(item[0], item[1], item[2]);
  else
    add_value(item.numel(), 1, 1);
  layer_out_.assign(static_cast<size_t>(num_layers_), 0);
  std::vector<LayerSpec> specs;
  for (int i = 0; i < num_layers_; ++i) specs.push_back(net.spec(i));
  build_chain(net, specs, net.graph(), 0, "", 0, true);
  classes_ = net.num_classes();
  find_pooled_convolutions();
  int64_t work = 0;
  for (const Node& n : nodes_)
    if (n.kind == Kind::kConv) {
      work = std::max<int64_t>(work, n.geom.work_bytes(n.pool >= 0 ? &n.windows : nullptr));
      max_weights_ = std::max(max_weights_, n.weights);
    }
  pool_ = pool;
  work_stride_ = (work + 63) / 64 * 64;
  plan_values();
}

bool NpuNetwork::kept_value(int v) const {
  if (v == 0 || v == layer_out_.back()) return true;
  for (int i = 1; i <= num_layers_; ++i)
    if ((start_ < 0 || i == start_) && layer_out_[i - 1] == v) return true;
  return false;
}

void NpuNetwork::find_pooled_convolutions() {
  std::vector<int> readers(values_.size(), 0);
  for (const Node& n : nodes_)
    for (int v : {n.in, n.in2})
      if (v >= 0) ++readers[v];
  for (size_t k = 0; k + 1 < nodes_.size(); ++k) {
    Node& n = nodes_[k];
    const Node& next = nodes_[k + 1];
    if (n.kind != Kind::kConv || next.kind != Kind::kMaxPool || next.in != n.out ||
        readers[n.out] != 1 || kept_value(n.out))
      continue;
    const Value& in = values_[next.in];
    n.pool = static_cast<int>(k + 1);
    n.windows = kernels::Pool2dGeometry::make(in.h, in.w, next.geom.kernel, next.geom.stride,
                                              next.geom.pad);
  }
}

void NpuNetwork::plan_values() {
  // Steps are node indices; a tensor a later pass reads lives to the end (step nodes_.size()).
  const int end = static_cast<int>(nodes_.size());
  std::vector<int> first(values_.size(), 0), last(values_.size(), 0);
  for (int k = 0; k < end; ++k) {
    const Node& n = nodes_[k];
    first[n.out] = last[n.out] = k;
    for (int v : {n.in, n.in2})
      if (v >= 0) last[v] = std::max(last[v], k);
  }
  for (size_t v = 0; v < values_.size(); ++v)
    if (kept_value(static_cast<int>(v))) last[v] = end;
  MemoryPlanner planner;
  // The input has a buffer of its own (the caller fills it); the others share the block.
  for (size_t i = 1; i < values_.size(); ++i)
    planner.add(static_cast<size_t>(batch_ * values_[i].numel()), first[i], last[i]);
  planner.plan();
  value_offset_.assign(values_.size(), 0);
  for (size_t i = 1; i < values_.size(); ++i)
    value_offset_[i] = planner.offset(static_cast<int>(i) - 1);
  values_bytes_ = planner.total();
}

// One buffer of the program: what it is for and its plan row.
struct NpuNetwork::Slot {
  enum Role { kInput, kValues, kWork, kWeightScratch, kQWeight, kQBias, kBias, kMaster, kLogits };
  Role role;
  int index;  // value or node index
  MemoryRow row;
};

std::vector<NpuNetwork::Slot> NpuNetwork::slots(int threads) const {
  std::vector<Slot> out;
  auto add = [&](Slot::Role role, int index, int layer, std::string what, Bucket b, int64_t bytes) {
    MemoryPlan one;
    one.add(layer, "npu " + std::move(what), b, static_cast<size_t>(bytes));
    out.push_back({role, index, one.rows[0]});
  };
  add(Slot::kInput, 0, -1, "int8 input", Bucket::kInput, batch_ * values_[0].numel());
  if (values_.size() > 1)
    add(Slot::kValues, 0, -1,
        "int8 tensors (" + std::to_string(values_.size() - 1) + ", placed by lifetime)",
        Bucket::kForward, static_cast<int64_t>(values_bytes_));
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    if (n.kind != Kind::kConv) continue;
    const auto k = static_cast<int>(i);
    const auto out_c = static_cast<int64_t>(n.bias_init.size());
    add(Slot::kQWeight, k, n.layer, "int8 weights", Bucket::kParameters, n.weights);
    add(Slot::kMaster, k, n.layer, "master weights", Bucket::kParameters,
        n.weights * static_cast<int64_t>(sizeof(float)));
    if (out_c > 0) {
      add(Slot::kQBias, k, n.layer, "int32 bias", Bucket::kParameters,
          out_c * static_cast<int64_t>(sizeof(int32_t)));
      add(Slot::kBias, k, n.layer, "folded bias", Bucket::kParameters,
          out_c * static_cast<int64_t>(sizeof(float)));
    }
  }
  if (work_stride_ > 0)
    add(Slot::kWork, 0, -1, "workspace", Bucket::kWorkspace, work_stride_ * threads);
  if (max_weights_ > 0) {
    add(Slot::kWeightScratch, 0, -1, "perturbed weights", Bucket::kWorkspace, max_weights_);
  }
  add(Slot::kLogits, 0, -1, "logits", Bucket::kForward,
      batch_ * classes_ * static_cast<int64_t>(sizeof(float)));
  return out;
}

MemoryPlan NpuNetwork::plan(int threads) const {
  MemoryPlan plan;
  for (const Slot& s : slots(threads)) plan.rows.push_back(s.row);
  return plan;
}

void NpuNetwork::allocate(Arena& arena) {
  ZT_ASSERT(!allocated_);
  allocated_ = true;
  for (const Slot& s : slots(pool_ ? pool_->size() : 1)) {
    void* p = arena.alloc_bytes(s.row.bucket, s.row.bytes);
    auto bytes = static_cast<std::byte*>(p);
    auto* f = reinterpret_cast<float*>(bytes);
    switch (s.role) {
      case Slot::kInput:
        values_[0].q = {reinterpret_cast<int8_t*>(bytes),
                        static_cast<size_t>(batch_ * values_[0].numel())};
        break;
      case Slot::kValues:
        for (size_t i = 1; i < values_.size(); ++i)
          values_[i].q = {reinterpret_cast<int8_t*>(bytes + value_offset_[i]),
                          static_cast<size_t>(batch_ * values_[i].numel())};
        break;
      case Slot::kQWeight: {
        Node& n = nodes_[s.index];
        n.qweight = {reinterpret_cast<int8_t*>(bytes), static_cast<size_t>(n.weights)};
        break;
      }
      case Slot::kMaster: {
        NpuParam& param = params_[nodes_[s.index].param];
        Tensor master(f, param.master.shape());
        master.copy_from(param.master);
        param.master = master;  // the staging copy goes
        break;
      }
      case Slot::kQBias: {
        Node& n = nodes_[s.index];
        n.qbias = {reinterpret_cast<int32_t*>(bytes), n.bias_init.size()};
        break;
      }
      case Slot::kBias: {
        Node& n = nodes_[s.index];
        std::copy(n.bias_init.begin(), n.bias_init.end(), f);
        n.bias = {f, n.bias_init.size()};
        break;
      }
      case Slot::kWork:
        work_ = {reinterpret_cast<int8_t*>(bytes), s.row.bytes};
        break;
      case Slot::kWeightScratch:
        wscratch_ = {reinterpret_cast<int8_t*>(bytes), static_cast<size_t>(max_weights_)};
        break;
      case Slot::kLogits:
        logits_ = Tensor(f, Shape{batch_, classes_});
        break;
    }
  }
  for (Node& n : nodes_) std::vector<float>().swap(n.bias_init);
}

namespace {

const Tensor* find(const std::vector<ParamRef>& refs, const std::string& name) {
  for (const ParamRef& r : refs)
    if (r.name == name) return &r.value;
  return nullptr;
}

}  // namespace

NpuNetwork::Act NpuNetwork::activation(Op op) {
  return op == Op::kReLU ? Act::kReLU : Act::kReLU6;
}

void NpuNetwork::add_weighted(const Network& net, const LayerSpec& s, const std::string& name,
                              const std::string& norm, Node& n) {
  const Value v = values_[n.in];  // a copy: add_value may move the values
  n.kind = Kind::kConv;
  if (s.op == Op::kLinear)
    n.geom = {v.numel(), 1, 1, s.out, 1, 1, 0, 1};
  else
    n.geom = {v.c, v.h, v.w, s.out, s.kernel, s.stride, s.pad, s.groups};
  const Tensor* w = find(net.params(), name + ".weight");
  const Tensor* b = find(net.params(), name + ".bias");
  ZT_ASSERT(w != nullptr);
  int index = -1;
  for (const ParamRef& r : net.params())
    if (r.name == name + ".weight") index = r.index;
  ZT_ASSERT(index >= 0);
  NpuParam p{n.layer, index, w->clone(), 0.0f, norm};
  const int64_t out = s.out, per_out = w->numel() / out;
  if (b) n.bias_init.assign(b->data(), b->data() + out);
  if (!norm.empty()) {
    // y = (conv(x) + b - mean) * gamma / sqrt(var + eps) + beta, folded into W and b.
    const Tensor* gamma = find(net.params(), norm + ".weight");
    const Tensor* beta = find(net.params(), norm + ".bias");
    const Tensor* mean = find(net.state(), norm + ".running_mean");
    const Tensor* var = find(net.state(), norm + ".running_var");
    ZT_ASSERT(gamma && beta && mean && var);
    n.bias_init.resize(static_cast<size_t>(out), 0.0f);
    for (int64_t o = 0; o < out; ++o) {
      const double f = (*gamma)[o] / std::sqrt(static_cast<double>((*var)[o]) +
                                               static_cast<double>(BatchNorm::kEps));
      for (int64_t j = 0; j < per_out; ++j)
        p.master[o * per_out + j] = static_cast<float>(p.master[o * per_out + j] * f);
      n.bias_init[o] = static_cast<float>((n.bias_init[o] - (*mean)[o]) * f + (*beta)[o]);
    }
  }
  n.param = static_cast<int>(params_.size());
  n.weights = w->numel();
  params_.push_back(std::move(p));
  param_node_.push_back(static_cast<int>(nodes_.size()));
  n.out = add_value(out, n.geom.out_h(), n.geom.out_w());
}

int NpuNetwork::build_chain(const Network& net, const std::vector<LayerSpec>& specs,
                            const Graph& lowered, int layer, const std::string& prefix, int in,
                            bool top) {
  // The fusion pass (nn/graph.h) with what the program runs fused: a batch norm folded into
  // the convolution or linear layer before it, a ReLU/ReLU6 into its producer's clamp.
  FusionRules rules;
  rules.fold_norm = true;
  rules.activated = [&](int i) { return specs[i].op == Op::kConv2d || specs[i].op == Op::kLinear; };
  const Graph g = fuse(lowered, rules);
  int cur = in;
  for (const GraphNode& gn : g.nodes) {
    const int i = gn.first;
    const LayerSpec& s = specs[i];
    const std::string name = prefix + std::to_string(i);
    const Value v = values_[cur];  // a copy: add_value may move the values
    Node n{};
    n.layer = top ? i : layer, n.in = cur;
    if (gn.act >= 0) n.act = activation(specs[gn.act].op);
    switch (s.op) {
      case Op::kConv2d:
      case Op::kLinear:
        add_weighted(net, s, name,
                     gn.kind == GraphNode::kFoldedNorm ? prefix + std::to_string(i + 1) : "", n);
        break;
      case Op::kBatchNorm:
        throw InputError(
            "NPU network: layer " + name +
            " (batch_norm) does not follow a conv2d or linear layer, so it cannot be "
            "folded" +
            (i > 0 ? " (it follows " + std::string(op_name(specs[i - 1].op)) + ")" : ""));
      case Op::kReLU:
      case Op::kReLU6:
        n.kind = Kind::kClamp;
        n.act = activation(s.op);
        n.out = add_value(v.c, v.h, v.w);
        values_[n.out].keeps_scale = true;
        break;
      case Op::kMaxPool2d:
      case Op::kAvgPool2d: {
        n.kind = s.op == Op::kMaxPool2d ? Kind::kMaxPool : Kind::kAvgPool;
        n.geom.kernel = s.kernel, n.geom.stride = s.stride, n.geom.pad = s.pad;
        n.out = add_value(v.c, (v.h + 2 * s.pad - s.kernel) / s.stride + 1,
                          (v.w + 2 * s.pad - s.kernel) / s.stride + 1);
        values_[n.out].keeps_scale = s.op == Op::kMaxPool2d;
        break;
      }
      case Op::kGlobalMaxPool:
      case Op::kGlobalAvgPool:
        n.kind = s.op == Op::kGlobalMaxPool ? Kind::kGlobalMax : Kind::kGlobalAvg;
        n.out = add_value(v.c, 1, 1);
        values_[n.out].keeps_scale = s.op == Op::kGlobalMaxPool;
        break;
      case Op::kFlatten:
      case Op::kDropout:  // identity at inference; a flattened tensor is read as features
        n.out = cur;
        break;
      case Op::kCount:
        ZT_ASSERT(false, "not an op");
        break;
      case Op::kResidual: {
        // The block's two chains, then their sum.
        const int main =
            build_chain(net, s.main, g.branches[gn.main], n.layer, name + ".main.", cur, false);
        const int shortcut = gn.shortcut < 0
                                 ? cur
                                 : build_chain(net, s.shortcut, g.branches[gn.shortcut], n.layer,
                                               name + ".shortcut.", cur, false);
        n.kind = Kind::kAdd;
        n.in = main, n.in2 = shortcut;
        n.act = s.post_relu ? Act::kReLU : Act::kNone;
        const Value& m = values_[main];
        n.out = add_value(m.c, m.h, m.w);
        break;
      }
    }
    const int out = n.out;
    if (out != cur) nodes_.push_back(std::move(n));
    cur = out;
    if (top)
      for (int j = gn.first; j <= gn.last; ++j) layer_out_[j] = cur;
  }
  return cur;
}

void NpuNetwork::float_node(Node& n, int64_t rows) {
  const Value& in = values_[n.in];
  Value& out = values_[n.out];
  const float* x = in.f.data();
  out.f.resize(static_cast<size_t>(rows * out.numel()));
  float* y = out.f.data();
  const int64_t planes = rows * in.c, size = in.h * in.w;
  switch (n.kind) {
    case Kind::kConv: {
      std::vector<float> col;
      conv_f32(n.geom, rows, x, params_[n.param].master.data(),
               n.bias.empty() ? nullptr : n.bias.data(), y, col);
      break;
    }
    case Kind::kClamp:
      std::copy_n(x, rows * out.numel(), y);
      break;
    case Kind::kMaxPool:
    case Kind::kAvgPool: {
      // Padding (max pooling's) never wins: positions outside the plane are skipped.
      const int64_t k = n.geom.kernel, s = n.geom.stride, pad = n.geom.pad;
      for (int64_t p = 0; p < planes; ++p)
        for (int64_t oy = 0; oy < out.h; ++oy)
          for (int64_t ox = 0; ox < out.w; ++ox) {
            float m = -std::numeric_limits<float>::infinity(), sum = 0;
            for (int64_t ky = 0; ky < k; ++ky)
              for (int64_t kx = 0; kx < k; ++kx) {
                const int64_t iy = oy * s - pad + ky, ix = ox * s - pad + kx;
                if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) continue;
                const float v = x[(p * in.h + iy) * in.w + ix];
                m = std::max(m, v);
                sum += v;
              }
            y[(p * out.h + oy) * out.w + ox] =
                n.kind == Kind::kMaxPool ? m : sum / static_cast<float>(k * k);
          }
      break;
    }
    case Kind::kGlobalMax:
    case Kind::kGlobalAvg:
      for (int64_t p = 0; p < planes; ++p) {
        const float* v = x + p * size;
        y[p] = n.kind == Kind::kGlobalMax
                   ? *std::max_element(v, v + size)
                   : static_cast<float>(std::accumulate(v, v + size, 0.0) / size);
      }
      break;
    case Kind::kAdd: {
      const float* b = values_[n.in2].f.data();
      for (int64_t i = 0; i < rows * out.numel(); ++i) y[i] = x[i] + b[i];
      break;
    }
  }
  if (n.act != Act::kNone) {
    const float hi = n.act == Act::kReLU6 ? 6.0f : std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < rows * out.numel(); ++i) y[i] = std::clamp(y[i], 0.0f, hi);
  }
}

Tensor NpuNetwork::float_forward(const float* x, int64_t rows, bool observe) {
  ZT_ASSERT(allocated_);
  ZT_ASSERT(rows >= 1, "NPU float forward: rows " + std::to_string(rows) + " < 1");
  Value& input = values_[0];
  input.f.assign(x, x + rows * input.numel());
  for (Node& n : nodes_) float_node(n, rows);
  if (observe) {
    for (Value& v : values_)
      for (int64_t i = 0; i < rows * v.numel(); ++i)
        v.observed = std::max(v.observed, static_cast<double>(std::fabs(v.f[i])));
    ++observed_passes_;
  }
  Tensor logits = Tensor::zeros(Shape{rows, classes_});
  std::copy_n(values_[layer_out_.back()].f.data(), logits.numel(), logits.data());
  for (Value& v : values_) std::vector<float>().swap(v.f);  // only for the call
  return logits;
}

void NpuNetwork::reset_observations() {
  for (Value& v : values_) v.observed = 0;
  observed_passes_ = 0;
}

void NpuNetwork::calibrate() {
  ZT_ASSERT(observed_passes_ > 0,
            "NPU calibration: no observed pass (run float_forward with observe first)");
  for (Value& v : values_) v.scale = scale_for(v.observed);
  for (const Node& n : nodes_)  // in program order, so a chain of kept scales resolves
    if (values_[n.out].keeps_scale) values_[n.out].scale = values_[n.in].scale;
  for (NpuParam& p : params_) {
    double max = 0;
    for (int64_t i = 0; i < p.master.numel(); ++i)
      max = std::max(max, static_cast<double>(std::fabs(p.master[i])));
    p.scale = scale_for(max);
  }
  apply_scales();
}

std::vector<float> NpuNetwork::scales() const {
  ZT_ASSERT(calibrated_);
  std::vector<float> out;
  for (const Value& v : values_) out.push_back(v.scale);
  for (const NpuParam& p : params_) out.push_back(p.scale);
  return out;
}

size_t NpuNetwork::num_scales() const {
  return values_.size() + params_.size();
}

void NpuNetwork::set_scales(const std::vector<float>& scales) {
  ZT_ASSERT(scales.size() == num_scales());
  for (size_t i = 0; i < values_.size(); ++i) values_[i].scale = scales[i];
  for (size_t i = 0; i < params_.size(); ++i) params_[i].scale = scales[values_.size() + i];
  apply_scales();
}

void NpuNetwork::apply_scales() {
  ZT_ASSERT(allocated_);
  for (Node& n : nodes_) {
    const double s_in = values_[n.in].scale, s_out = values_[n.out].scale;
    n.lo = n.act == Act::kNone ? -127 : 0;
    n.hi =
        n.act == Act::kReLU6 ? static_cast<int32_t>(std::min(127.0, std::round(6 / s_out))) : 127;
    switch (n.kind) {
      case Kind::kConv: {
        const double s_acc = s_in * params_[n.param].scale;
        for (size_t o = 0; o < n.bias.size(); ++o)
          n.qbias[o] = static_cast<int32_t>(
              std::clamp<double>(std::round(n.bias[o] / s_acc), std::numeric_limits<int32_t>::min(),
                                 std::numeric_limits<int32_t>::max()));
        n.mult = kernels::quantize_multiplier(s_acc / s_out);
        quantize_param(static_cast<size_t>(n.param));
        break;
      }
      case Kind::kAvgPool:
        n.mult = kernels::quantize_multiplier(
            s_in / (static_cast<double>(n.geom.kernel * n.geom.kernel) * s_out));
        break;
      case Kind::kGlobalAvg:
        n.mult = kernels::quantize_multiplier(
            s_in / (static_cast<double>(values_[n.in].h * values_[n.in].w) * s_out));
        break;
      case Kind::kAdd:
        n.mult = kernels::quantize_multiplier(s_in / s_out);
        n.mult2 = kernels::quantize_multiplier(values_[n.in2].scale / s_out);
        break;
      case Kind::kMaxPool:
      case Kind::kGlobalMax:
      case Kind::kClamp:
        break;  // the input's scale, nothing to requantize
    }
  }
  calibrated_ = true;
  input_rows_ = kept_rows_ = 0;  // quantized with the old scales
  clean_to_ = 0;
}

void NpuNetwork::quantize_param(size_t i) {
  const NpuParam& p = params_[i];
  Node& n = nodes_[param_node_[i]];
  parallel_for(pool_, p.master.numel(), [&](int64_t b, int64_t e) {
    kernels::quantize_s8(p.master.data() + b, e - b, p.scale, n.qweight.data() + b);
  });
}

void NpuNetwork::requantize(const NpuParam& p) {
  const auto i = static_cast<size_t>(&p - params_.data());
  ZT_ASSERT(&p >= params_.data() && i < params_.size(),
            "NPU requantize: not one of this network's params()");
  ZT_ASSERT(calibrated_, "NPU requantize: the network is not calibrated");
  quantize_param(i);
  clean_to_ = std::min(clean_to_, p.layer);
}

std::span<const int8_t> NpuNetwork::quantized(size_t i) const {
  ZT_ASSERT(i < params_.size(),
            "NPU quantized: param " + std::to_string(i) + " of " + std::to_string(params_.size()));
  return nodes_[param_node_[i]].qweight;
}

void NpuNetwork::check_rows(int64_t rows, const char* what) const {
  ZT_ASSERT(rows >= 1 && rows <= batch_, std::string("NPU ") + what + ": rows " +
                                             std::to_string(rows) + " not in [1, " +
                                             std::to_string(batch_) + "]");
}

void NpuNetwork::set_input(const float* x, int64_t rows) {
  check_rows(rows, "set_input");
  ZT_ASSERT(calibrated_, "NPU set_input: the network is not calibrated");
  Value& in = values_[0];
  parallel_for(pool_, rows * in.numel(), [&](int64_t b, int64_t e) {
    kernels::quantize_s8(x + b, e - b, in.scale, in.q.data() + b);
  });
  input_rows_ = rows;
  kept_rows_ = 0;
  clean_to_ = 0;
}

float NpuNetwork::input_scale() const {
  return values_[0].scale;
}

float NpuNetwork::output_scale() const {
  return values_[layer_out_.back()].scale;
}

const int8_t* NpuNetwork::weights_for(const Node& n, const Perturb* perturb) {
  if (!perturb || n.layer < perturb->first_layer) return n.qweight.data();
  const NpuParam& p = params_[n.param];
  const int64_t size = n.weights;
  // z (0 or ±1) as the host's seed replay draws it (the ternary z is the sparse Rademacher
  // one, element for element), added in integers; any split of the range draws the same values.
  const uint32_t threshold = zo::zero_threshold(perturb->p_zero);
  parallel_for(pool_, size, [&](int64_t b, int64_t e) {
    zo::add_ternary(perturb->seed, static_cast<uint32_t>(p.param_index), threshold, perturb->sign,
                    n.qweight.data(), wscratch_.data(), b, e);
  });
  return wscratch_.data();
}

void NpuNetwork::int8_node(const Node& n, int64_t rows, const int8_t* weight, bool pooled) {
  // Row blocks on the pool's workers: every kernel below is exact integer arithmetic per row.
  parallel_for(pool_, rows, [&](int slot, int64_t r0, int64_t r1) {
    int8_node_rows(n, r0, r1, weight, work_.data() + slot * work_stride_, pooled);
  });
}

void NpuNetwork::int8_node_rows(const Node& n, int64_t r0, int64_t r1, const int8_t* weight,
                                int8_t* work, bool pooled) {
  const Value& in = values_[n.in];
  Value& out = values_[pooled ? nodes_[n.pool].out : n.out];
  const int64_t rows = r1 - r0;
  const int8_t* x = in.q.data() + r0 * in.numel();
  int8_t* y = out.q.data() + r0 * out.numel();
  const int64_t planes = rows * in.c;
  switch (n.kind) {
    case Kind::kConv:
      kernels::conv_s8(n.geom, rows, x, weight, n.qbias.empty() ? nullptr : n.qbias.data(), n.mult,
                       n.lo, n.hi, y, work, pooled ? &n.windows : nullptr);
      break;
    case Kind::kClamp:
      kernels::clamp_s8(rows * in.numel(), x, n.lo, n.hi, y);
      break;
    case Kind::kMaxPool:
      kernels::max_pool_s8(planes, in.h, in.w, n.geom.kernel, n.geom.stride, n.geom.pad, x, y);
      break;
    case Kind::kAvgPool:
      kernels::avg_pool_s8(planes, in.h, in.w, n.geom.kernel, n.geom.stride, x, n.mult, y);
      break;
    case Kind::kGlobalMax:
      kernels::global_max_pool_s8(planes, in.h * in.w, x, y);
      break;
    case Kind::kGlobalAvg:
      kernels::global_avg_pool_s8(planes, in.h * in.w, x, n.mult, y);
      break;
    case Kind::kAdd:
      kernels::add_s8(rows * out.numel(), x, n.mult, values_[n.in2].q.data() + r0 * out.numel(),
                      n.mult2, n.lo, n.hi, y);
      break;
  }
}

void NpuNetwork::run(int64_t rows, int from, int to, const Perturb* perturb) {
  for (size_t k = 0; k < nodes_.size(); ++k) {
    const Node& n = nodes_[k];
    if (n.layer < from || n.layer >= to) continue;
    if (n.kind != Kind::kConv) {
      int8_node(n, rows, nullptr);
      continue;
    }
    // A max pooling this pass runs, written by the convolution where it can: skipped after it.
    const bool pooled = n.pool >= 0 && nodes_[n.pool].layer < to &&
                        kernels::conv_s8_pools(n.geom, n.mult, n.windows);
    int8_node(n, rows, weights_for(n, perturb), pooled);
    if (pooled) ++k;
  }
  if (from == 0) kept_rows_ = rows;
  clean_to_ = perturb ? std::max(from, std::min(to, perturb->first_layer)) : to;
}

bool NpuNetwork::keeps(int to) const {
  return to == 0 || to == num_layers_ || start_ < 0 || to == start_;
}

Tensor NpuNetwork::forward(int64_t rows, int from, const Perturb* perturb) {
  check_rows(rows, "forward");
  ZT_ASSERT(keeps(from), "NPU forward: from " + std::to_string(from) +
                             ", but the program keeps the output before layer " +
                             std::to_string(start_) + " only");
  ZT_ASSERT(calibrated_, "NPU forward: the network is not calibrated");
  ZT_ASSERT(from >= 0 && from <= num_layers_, "NPU forward: from " + std::to_string(from) +
                                                  " not in [0, " + std::to_string(num_layers_) +
                                                  "]");
  ZT_ASSERT(from > 0 || rows <= input_rows_, "NPU forward: " + std::to_string(rows) +
                                                 " rows but set_input gave " +
                                                 std::to_string(input_rows_));
  ZT_ASSERT(from == 0 || (rows == kept_rows_ && from <= clean_to_),
            "NPU forward from layer " + std::to_string(from) +
                ": no kept, unperturbed output of layer " + std::to_string(from - 1) + " for " +
                std::to_string(rows) + " rows (run forward_prefix first)");
  ZT_ASSERT(!perturb || perturb->sign == 1 || perturb->sign == -1,
            "NPU forward: perturbation sign " + std::to_string(perturb->sign) + " is not +1 or -1");
  run(rows, from, num_layers_, perturb);
  const Value& out = values_[layer_out_.back()];
  Tensor logits = logits_.rows(0, rows);
  for (int64_t i = 0; i < logits.numel(); ++i) logits[i] = out.q[i] * out.scale;
  return logits;
}

void NpuNetwork::forward_prefix(int64_t rows, int to) {
  check_rows(rows, "forward_prefix");
  ZT_ASSERT(keeps(to));
  ZT_ASSERT(calibrated_, "NPU forward_prefix: the network is not calibrated");
  ZT_ASSERT(to >= 0 && to <= num_layers_, "NPU forward_prefix: to " + std::to_string(to) +
                                              " not in [0, " + std::to_string(num_layers_) + "]");
  ZT_ASSERT(rows <= input_rows_, "NPU forward_prefix: " + std::to_string(rows) +
                                     " rows but set_input gave " + std::to_string(input_rows_));
  run(rows, 0, to, nullptr);
}

int64_t NpuNetwork::prefix_numel(int to) const {
  ZT_ASSERT(to > 0 && to <= num_layers_);
  return values_[layer_out_[to - 1]].numel();
}

const int8_t* NpuNetwork::prefix_output(int to) const {
  ZT_ASSERT(to > 0 && to <= num_layers_ && keeps(to));
  return values_[layer_out_[to - 1]].q.data();
}

void NpuNetwork::set_prefix_output(int to, const int8_t* x, int64_t rows) {
  check_rows(rows, "set_prefix_output");
  ZT_ASSERT(to > 0 && to <= num_layers_ && keeps(to));
  const std::span<int8_t> q = values_[layer_out_[to - 1]].q;
  std::copy(x, x + rows * prefix_numel(to), q.begin());
  input_rows_ = 0;  // the input buffer no longer matches the kept outputs
  kept_rows_ = rows;
  clean_to_ = to;
}

size_t NpuNetwork::bytes() const {
  return plan(pool_ ? pool_->size() : 1).total();
}

}  // namespace zotrain
