#include "zotrain/models/onnx.h"

#include "zotrain/core/error.h"

#ifdef ZOTRAIN_WITH_ONNX

#include <onnx/onnx_pb.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "zotrain/nn/network.h"

namespace zotrain {

namespace {

constexpr const char* kSupported =
    "Conv, Gemm, MatMul + Add, Relu, Clip (0..6), MaxPool, AveragePool, GlobalAveragePool, "
    "GlobalMaxPool, BatchNormalization, Add (residual), Flatten, Reshape, Dropout, Identity, "
    "Pad (of zeros)";
constexpr double kBatchNormEps = 1e-5;  // zotrain's batch norm (nn/batch_norm.h)

// A layer read from the graph and its tensors, named as its parameters and state are
// ("weight", "main.0.running_mean", ...).
struct Imported {
  LayerSpec spec;
  std::vector<std::pair<std::string, Tensor>> params, state;
};

class Reader {
 public:
  Reader(const std::string& path, const onnx::GraphProto& g) : path_(path), g_(g) {
    for (const onnx::TensorProto& t : g.initializer()) init_[t.name()] = &t;
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      if (n.op_type() == "Constant") {
        for (const onnx::AttributeProto& a : n.attribute())
          if (a.name() == "value") init_[n.output(0)] = &a.t();
        continue;
      }
      // PyTorch shares equal initializers (zero biases) through Identity nodes: constants too.
      if (n.op_type() == "Identity" && init_.count(n.input(0))) {
        init_[n.output(0)] = init_[n.input(0)];
        continue;
      }
      for (const std::string& in : n.input())
        if (!in.empty() && !init_.count(in)) consumers_[in].push_back(&n);
    }
  }

  // The layers from tensor `t` until the graph's output; t moves along.
  std::vector<Imported> chain(std::string t) {
    std::vector<Imported> out;
    while (true) {
      const auto& c = consumers(t);
      if (c.empty()) {
        if (t != g_.output(0).name())
          throw InputError(path_ + ": tensor " + t + " is used by no node and is not the output");
        return out;
      }
      if (c.size() == 1) {
        if (is_join(*c[0])) throw error(*c[0], "adds tensors that do not branch from one");
        t = convert(*c[0], out);
        continue;
      }
      t = residual(t, c, out);
    }
  }

 private:
  InputError error(const onnx::NodeProto& n, const std::string& what) const {
    return InputError(path_ + ": node '" + n.name() + "' (" + n.op_type() + ") " + what +
                      "; zotrain reads " + kSupported);
  }
  const std::vector<const onnx::NodeProto*>& consumers(const std::string& t) {
    return consumers_[t];
  }
  bool is_join(const onnx::NodeProto& n) const {
    return n.op_type() == "Add" && n.input_size() == 2 && !init_.count(n.input(0)) &&
           !init_.count(n.input(1));
  }

  // The attribute `name` of n (null when absent).
  static const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name) {
    for (const onnx::AttributeProto& a : n.attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  static int64_t attr_int(const onnx::NodeProto& n, const std::string& name, int64_t dflt) {
    const onnx::AttributeProto* a = attr(n, name);
    return a ? a->i() : dflt;
  }
  static std::vector<int64_t> attr_ints(const onnx::NodeProto& n, const std::string& name) {
    const onnx::AttributeProto* a = attr(n, name);
    return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
  }

  // A constant input of n (initializer or Constant node) as floats.
  Tensor constant(const onnx::NodeProto& n, int input) const {
    if (input >= n.input_size() || !init_.count(n.input(input)))
      throw error(n, "needs input " + std::to_string(input) + " to be a constant");
    const onnx::TensorProto& t = *init_.at(n.input(input));
    if (t.dims_size() > Shape::kMaxDims)
      throw error(n, "has a constant " + t.name() + " of more than 4 dimensions");
    Shape shape{1};
    if (t.dims_size() > 0) shape.rank = t.dims_size();
    for (int d = 0; d < t.dims_size(); ++d) shape[d] = t.dims(d);
    Tensor out = Tensor::zeros(shape);
    const auto count = static_cast<size_t>(out.numel());
    if (t.data_type() == onnx::TensorProto::FLOAT) {
      if (!t.raw_data().empty()) {
        if (t.raw_data().size() != count * sizeof(float))
          throw error(n, "has a constant " + t.name() + " whose data is not its shape's size");
        std::memcpy(out.data(), t.raw_data().data(), count * sizeof(float));
      } else {
        if (static_cast<size_t>(t.float_data_size()) != count)
          throw error(n, "has a constant " + t.name() + " whose data is not its shape's size");
        std::copy(t.float_data().begin(), t.float_data().end(), out.data());
      }
      return out;
    }
    if (t.data_type() == onnx::TensorProto::INT64) {
      std::vector<int64_t> v(count);
      if (!t.raw_data().empty() && t.raw_data().size() == count * sizeof(int64_t))
        std::memcpy(v.data(), t.raw_data().data(), count * sizeof(int64_t));
      else if (static_cast<size_t>(t.int64_data_size()) == count)
        std::copy(t.int64_data().begin(), t.int64_data().end(), v.begin());
      else
        throw error(n, "has a constant " + t.name() + " whose data is not its shape's size");
      for (size_t i = 0; i < count; ++i) out[static_cast<int64_t>(i)] = static_cast<float>(v[i]);
      return out;
    }
    throw error(n, "has a constant " + t.name() + " of data type " + std::to_string(t.data_type()) +
                       " (float or int64 expected)");
  }

  // Square kernel, equal strides, symmetric pads, dilation 1: {kernel, stride, pad}.
  std::array<int64_t, 3> window(const onnx::NodeProto& n) const {
    const std::vector<int64_t> k = attr_ints(n, "kernel_shape"), s = attr_ints(n, "strides"),
                               p = attr_ints(n, "pads"), d = attr_ints(n, "dilations");
    if (k.size() != 2 || k[0] != k[1]) throw error(n, "has a kernel that is not square 2-D");
    if (!s.empty() && (s.size() != 2 || s[0] != s[1])) throw error(n, "has unequal strides");
    if (!p.empty() && (p.size() != 4 || p[0] != p[1] || p[0] != p[2] || p[0] != p[3]))
      throw error(n, "has pads that are not equal on every side");
    for (int64_t v : d)
      if (v != 1) throw error(n, "has a dilation other than 1");
    const auto pad = attr(n, "auto_pad");
    if (pad && pad->s() != "NOTSET" && pad->s() != "VALID") throw error(n, "has auto_pad");
    return {k[0], s.empty() ? 1 : s[0], p.empty() ? 0 : p[0]};
  }

  // Converts node n (its first input the current tensor), appending to `out`; returns the tensor
  // the chain continues from.
  std::string convert(const onnx::NodeProto& n, std::vector<Imported>& out) {
    const std::string& op = n.op_type();
    std::string next = n.output(0);
    Imported m;
    if (op == "Identity" || (op == "Dropout" && n.input_size() < 2 && !attr(n, "ratio"))) {
      return next;  // Dropout without a ratio: the default 0.5 is a training choice, below
    } else if (op == "Pad") {
      // PyTorch writes AvgPool2d as a Pad of zeros before the pooling.
      const Tensor pads = n.input_size() >= 2 ? constant(n, 1) : Tensor{};
      const std::vector<int64_t> old_pads = attr_ints(n, "pads");
      for (int64_t i = 0; i < pads.numel(); ++i)
        if (pads[i] != 0) throw error(n, "pads (zotrain pads only inside Conv)");
      for (int64_t v : old_pads)
        if (v != 0) throw error(n, "pads (zotrain pads only inside Conv)");
      return next;
    } else if (op == "Dropout") {
      const float rate =
          n.input_size() >= 2 && !n.input(1).empty() ? constant(n, 1)[0] : attr(n, "ratio")->f();
      m.spec = LayerSpec::dropout(rate);
    } else if (op == "Conv") {
      const auto [k, s, p] = window(n);
      const Tensor w = constant(n, 1);
      if (w.shape().rank != 4) throw error(n, "has a weight that is not 4-D");
      const bool bias = n.input_size() >= 3 && !n.input(2).empty();
      m.spec = LayerSpec::conv2d(w.shape()[0], k, s, p, attr_int(n, "group", 1), bias);
      m.params.emplace_back("weight", w);
      if (bias) m.params.emplace_back("bias", constant(n, 2));
    } else if (op == "Gemm" || op == "MatMul") {
      if (op == "Gemm" &&
          (attr_int(n, "transA", 0) != 0 || (attr(n, "alpha") && attr(n, "alpha")->f() != 1.0f) ||
           (attr(n, "beta") && attr(n, "beta")->f() != 1.0f)))
        throw error(n, "has transA, alpha or beta other than 0, 1, 1");
      Tensor w = constant(n, 1);
      if (w.shape().rank != 2) throw error(n, "has a weight that is not 2-D");
      if (op == "MatMul" || attr_int(n, "transB", 0) == 0) w = transposed(w);
      m.spec = LayerSpec::linear(w.shape()[0]);
      m.params.emplace_back("weight", w);
      Tensor b = Tensor::zeros(Shape{w.shape()[0]});
      if (op == "Gemm" && n.input_size() >= 3 && !n.input(2).empty()) b = constant(n, 2);
      // MatMul's bias is the Add of a constant that follows it.
      const auto& after = consumers(next);
      if (op == "MatMul" && after.size() == 1 && after[0]->op_type() == "Add" &&
          !is_join(*after[0])) {
        const onnx::NodeProto& add = *after[0];
        b = constant(add, init_.count(add.input(1)) ? 1 : 0);
        next = add.output(0);
      }
      if (b.numel() != w.shape()[0]) throw error(n, "has a bias of another size than its outputs");
      m.params.emplace_back("bias", Tensor(b.data(), Shape{w.shape()[0]}).clone());
    } else if (op == "Relu") {
      m.spec = LayerSpec::relu();
    } else if (op == "Clip") {
      float lo = 0, hi = 0;
      if (n.input_size() >= 3) {
        lo = n.input(1).empty() ? -INFINITY : constant(n, 1)[0];
        hi = n.input(2).empty() ? INFINITY : constant(n, 2)[0];
      } else {
        lo = attr(n, "min") ? attr(n, "min")->f() : -INFINITY;
        hi = attr(n, "max") ? attr(n, "max")->f() : INFINITY;
      }
      if (lo != 0.0f || hi != 6.0f) throw error(n, "clips to other bounds than 0 and 6 (ReLU6)");
      m.spec = LayerSpec::relu6();
    } else if (op == "MaxPool" || op == "AveragePool") {
      // Padding never wins a max (PyTorch pads with -inf): zotrain clips the windows. Average
      // pooling's padding would count in the mean, which zotrain's does not do.
      const auto [k, s, p] = window(n);
      if (attr_int(n, "ceil_mode", 0) != 0) throw error(n, "pools with ceil_mode");
      if (op == "AveragePool" && p != 0) throw error(n, "pads an average pooling");
      if (p >= k) throw error(n, "pads by its kernel or more");
      m.spec = {op == "MaxPool" ? Op::kMaxPool2d : Op::kAvgPool2d, 0, k, s, p};
    } else if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
      m.spec =
          op == "GlobalAveragePool" ? LayerSpec::global_avg_pool() : LayerSpec::global_max_pool();
      // PyTorch's adaptive pooling then flattens: [N, C, 1, 1] -> [N, C]. zotrain's global
      // pooling gives [N, C] already; a Flatten (or Reshape) after it is the identity.
    } else if (op == "BatchNormalization") {
      const onnx::AttributeProto* eps = attr(n, "epsilon");
      if (eps && std::fabs(eps->f() - kBatchNormEps) > 1e-9)
        throw error(n, "has epsilon " + std::to_string(eps->f()) + " (zotrain's is 1e-5)");
      m.spec = LayerSpec::batch_norm();
      m.params = {{"weight", constant(n, 1)}, {"bias", constant(n, 2)}};
      m.state = {{"running_mean", constant(n, 3)}, {"running_var", constant(n, 4)}};
    } else if (op == "Flatten" || op == "Reshape") {
      if (op == "Flatten" && attr_int(n, "axis", 1) != 1)
        throw error(n, "flattens from an axis other than 1");
      if (op == "Reshape") {
        const Tensor shape = constant(n, 1);
        if (shape.numel() != 2 || !(shape[1] == -1 || shape[0] == -1 || shape[0] == 0))
          throw error(n, "reshapes to other than [batch, features]");
      }
      if (!out.empty() &&
          (out.back().spec.op == Op::kGlobalAvgPool || out.back().spec.op == Op::kGlobalMaxPool ||
           out.back().spec.op == Op::kFlatten))
        return next;
      m.spec = LayerSpec::flatten();
    } else {
      throw error(n, "is not supported");
    }
    out.push_back(std::move(m));
    return next;
  }

  // A fork at tensor t into two branches joined by an Add: one residual layer.
  std::string residual(const std::string& t, const std::vector<const onnx::NodeProto*>& forks,
                       std::vector<Imported>& out) {
    if (forks.size() != 2)
      throw InputError(path_ + ": tensor " + t + " feeds " + std::to_string(forks.size()) +
                       " nodes; zotrain reads two-way branches joined by an Add (residual)");
    std::vector<Imported> branch[2];
    const onnx::NodeProto* join[2] = {nullptr, nullptr};
    for (int b = 0; b < 2; ++b) {
      const onnx::NodeProto* n = forks[b];
      while (!is_join(*n)) {
        const std::string next = convert(*n, branch[b]);
        const auto& c = consumers(next);
        if (c.size() != 1)
          throw error(*n, "starts a branch that forks again or ends before joining");
        n = c[0];
      }
      join[b] = n;
    }
    if (join[0] != join[1]) throw error(*join[0], "joins branches of different forks");
    // The main chain holds more layers; the shortcut may be empty (the identity).
    const int main = branch[0].size() >= branch[1].size() ? 0 : 1;
    std::string next = join[0]->output(0);
    bool post_relu = false;
    const auto& after = consumers(next);
    if (after.size() == 1 && after[0]->op_type() == "Relu") {
      post_relu = true;
      next = after[0]->output(0);
    }
    Imported m;
    std::vector<LayerSpec> chains[2];
    const char* names[2] = {"main.", "shortcut."};
    for (int r = 0; r < 2; ++r) {
      std::vector<Imported>& br = branch[r == 0 ? main : 1 - main];
      for (size_t i = 0; i < br.size(); ++i) {
        chains[r].push_back(br[i].spec);
        const std::string prefix = names[r] + std::to_string(i) + ".";
        for (auto& [name, t2] : br[i].params) m.params.emplace_back(prefix + name, t2);
        for (auto& [name, t2] : br[i].state) m.state.emplace_back(prefix + name, t2);
      }
    }
    m.spec = LayerSpec::residual(chains[0], chains[1], post_relu);
    out.push_back(std::move(m));
    return next;
  }

  static Tensor transposed(const Tensor& w) {
    const int64_t r = w.shape()[0], c = w.shape()[1];
    Tensor t = Tensor::zeros(Shape{c, r});
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) t[j * r + i] = w[i * c + j];
    return t;
  }

  const std::string& path_;
  const onnx::GraphProto& g_;
  std::map<std::string, const onnx::TensorProto*> init_;
  std::map<std::string, std::vector<const onnx::NodeProto*>> consumers_;
};

}  // namespace

bool onnx_supported() {
  return true;
}

OnnxModel read_onnx(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the ONNX file");
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&in))
    throw InputError(path + ": not an ONNX model (protobuf parse failed)");
  for (const onnx::OperatorSetIdProto& o : model.opset_import())
    if ((o.domain().empty() || o.domain() == "ai.onnx") && (o.version() < 9 || o.version() > 17))
      throw InputError(path + ": opset " + std::to_string(o.version()) +
                       " (zotrain reads opsets 9 to 17)");
  const onnx::GraphProto& g = model.graph();
  if (g.output_size() != 1)
    throw InputError(path + ": the graph has " + std::to_string(g.output_size()) +
                     " outputs (one, the logits, expected)");
  // The input: the graph input that is not an initializer, [batch, C, H, W].
  const onnx::ValueInfoProto* input = nullptr;
  for (const onnx::ValueInfoProto& v : g.input()) {
    bool is_init = false;
    for (const onnx::TensorProto& t : g.initializer()) is_init |= t.name() == v.name();
    if (!is_init) {
      if (input) throw InputError(path + ": the graph has more than one input");
      input = &v;
    }
  }
  if (!input) throw InputError(path + ": the graph has no input");
  const auto& dims = input->type().tensor_type().shape().dim();
  if (dims.size() != 4)
    throw InputError(path + ": input " + input->name() + " has " + std::to_string(dims.size()) +
                     " dimensions ([batch, channels, height, width] expected)");
  std::vector<int64_t> item;
  for (int d = 1; d < 4; ++d) {
    if (dims[d].dim_value() <= 0)
      throw InputError(path + ": input " + input->name() + " has no fixed size in dimension " +
                       std::to_string(d));
    item.push_back(dims[d].dim_value());
  }
  Reader reader(path, g);
  const std::vector<Imported> layers = reader.chain(input->name());
  OnnxModel m;
  m.spec.name = path;
  m.spec.item_shape = Shape{item[0], item[1], item[2]};
  for (const Imported& l : layers) m.spec.layers.push_back(l.spec);
  // The network these layers make, to check every tensor against its parameter's shape.
  const Network net(m.spec.item_shape, m.spec.layers);
  m.spec.num_classes = net.num_classes();
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string layer = std::to_string(i) + ".";
    for (const auto& [kind, list] :
         {std::pair{"param/", &layers[i].params}, std::pair{"state/", &layers[i].state}})
      for (const auto& [name, t] : *list) m.params.tensors.emplace_back(kind + layer + name, t);
  }
  for (int i = 0; i < net.num_layers(); ++i)
    for (const ParamSpec& ps : net.layer(i).param_specs()) {
      const std::string name = std::to_string(i) + "." + ps.name;
      const Tensor* t = m.params.find("param/" + name);
      if (!t || t->shape() != ps.shape)
        throw InputError(path + ": parameter " + name + " (" + net.layer(i).describe() +
                         ") should be " + ps.shape.str() +
                         (t ? ", the file's is " + t->shape().str() : ", the file has none"));
    }
  return m;
}

namespace {

// Builds the graph of write_onnx: one node list, initializers named by the parameters.
class Writer {
 public:
  Writer(onnx::GraphProto& g, const TensorFile& params) : g_(g), params_(params) {}

  // Appends layer `spec` (named `name`, e.g. "3" or "3.main.0") reading tensor x; returns its
  // output tensor.
  std::string layer(const LayerSpec& spec, const std::string& name, const std::string& x) {
    const std::string y = "t" + name;
    switch (spec.op) {
      case Op::kConv2d: {
        onnx::NodeProto& n = node("Conv", name, {x, init(name, "weight")}, y);
        if (spec.bias) n.add_input(init(name, "bias"));
        ints(n, "kernel_shape", {spec.kernel, spec.kernel});
        ints(n, "strides", {spec.stride, spec.stride});
        ints(n, "pads", {spec.pad, spec.pad, spec.pad, spec.pad});
        integer(n, "group", spec.groups);
        return y;
      }
      case Op::kLinear: {
        onnx::NodeProto& n = node("Gemm", name, {x, init(name, "weight"), init(name, "bias")}, y);
        integer(n, "transB", 1);
        return y;
      }
      case Op::kReLU:
        node("Relu", name, {x}, y);
        return y;
      case Op::kReLU6:
        node("Clip", name, {x, scalar(name + ".min", 0), scalar(name + ".max", 6)}, y);
        return y;
      case Op::kMaxPool2d:
      case Op::kAvgPool2d: {
        onnx::NodeProto& n =
            node(spec.op == Op::kMaxPool2d ? "MaxPool" : "AveragePool", name, {x}, y);
        ints(n, "kernel_shape", {spec.kernel, spec.kernel});
        ints(n, "strides", {spec.stride, spec.stride});
        if (spec.pad) ints(n, "pads", {spec.pad, spec.pad, spec.pad, spec.pad});
        return y;
      }
      case Op::kGlobalAvgPool:
      case Op::kGlobalMaxPool: {
        // ONNX keeps [N, C, 1, 1]; zotrain's global pooling gives [N, C].
        node(spec.op == Op::kGlobalAvgPool ? "GlobalAveragePool" : "GlobalMaxPool", name, {x},
             y + ".pooled");
        integer(node("Flatten", name + ".flatten", {y + ".pooled"}, y), "axis", 1);
        return y;
      }
      case Op::kFlatten:
        integer(node("Flatten", name, {x}, y), "axis", 1);
        return y;
      case Op::kDropout:
        return x;  // inference
      case Op::kBatchNorm: {
        onnx::NodeProto& n =
            node("BatchNormalization", name,
                 {x, init(name, "weight"), init(name, "bias"), init(name, "running_mean", "state/"),
                  init(name, "running_var", "state/")},
                 y);
        onnx::AttributeProto& a = *n.add_attribute();
        a.set_name("epsilon");
        a.set_type(onnx::AttributeProto::FLOAT);
        a.set_f(static_cast<float>(kBatchNormEps));
        return y;
      }
      case Op::kResidual: {
        std::string main = x, shortcut = x;
        for (size_t i = 0; i < spec.main.size(); ++i)
          main = layer(spec.main[i], name + ".main." + std::to_string(i), main);
        for (size_t i = 0; i < spec.shortcut.size(); ++i)
          shortcut = layer(spec.shortcut[i], name + ".shortcut." + std::to_string(i), shortcut);
        if (!spec.post_relu) {
          node("Add", name, {main, shortcut}, y);
          return y;
        }
        node("Add", name, {main, shortcut}, y + ".sum");
        node("Relu", name + ".relu", {y + ".sum"}, y);
        return y;
      }
      default:
        throw InputError(std::string("write_onnx: layer ") + name + " (" + op_name(spec.op) +
                         ") has no ONNX form here");
    }
  }

 private:
  onnx::NodeProto& node(const std::string& op, const std::string& name,
                        const std::vector<std::string>& in, const std::string& out) {
    onnx::NodeProto& n = *g_.add_node();
    n.set_op_type(op);
    n.set_name(op + "_" + name);
    for (const std::string& i : in) n.add_input(i);
    n.add_output(out);
    return n;
  }
  static void ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    onnx::AttributeProto& a = *n.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a.add_ints(x);
  }
  static onnx::NodeProto& integer(onnx::NodeProto& n, const std::string& name, int64_t v) {
    onnx::AttributeProto& a = *n.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(v);
    return n;
  }
  // The parameter (or state) tensor `what` of layer `name` as an initializer; returns its name.
  std::string init(const std::string& name, const std::string& what,
                   const std::string& kind = "param/") {
    const std::string full = kind + name + "." + what;
    const Tensor* t = params_.find(full);
    if (!t) throw InputError("write_onnx: no tensor " + full);
    onnx::TensorProto& p = *g_.add_initializer();
    p.set_name(full);
    p.set_data_type(onnx::TensorProto::FLOAT);
    for (int d = 0; d < t->shape().rank; ++d) p.add_dims(t->shape()[d]);
    p.set_raw_data(t->data(), static_cast<size_t>(t->numel()) * sizeof(float));
    return full;
  }
  std::string scalar(const std::string& name, float v) {
    onnx::TensorProto& p = *g_.add_initializer();
    p.set_name(name);
    p.set_data_type(onnx::TensorProto::FLOAT);
    p.set_raw_data(&v, sizeof v);
    return name;
  }

  onnx::GraphProto& g_;
  const TensorFile& params_;
};

void set_dims(onnx::ValueInfoProto& v, const std::vector<int64_t>& dims) {
  v.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  onnx::TensorShapeProto& s = *v.mutable_type()->mutable_tensor_type()->mutable_shape();
  s.add_dim()->set_dim_param("batch");
  for (int64_t d : dims) s.add_dim()->set_dim_value(d);
}

}  // namespace

void write_onnx(const std::string& path, const ModelSpec& spec, const TensorFile& params) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("zotrain");
  model.add_opset_import()->set_version(13);
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name(spec.name);
  Writer w(g, params);
  std::string x = "input";
  for (size_t i = 0; i < spec.layers.size(); ++i) x = w.layer(spec.layers[i], std::to_string(i), x);
  // The last layer's output is the logits.
  onnx::NodeProto& out = *g.add_node();
  out.set_op_type("Identity");
  out.set_name("logits");
  out.add_input(x);
  out.add_output("logits");
  onnx::ValueInfoProto& in = *g.add_input();
  in.set_name("input");
  set_dims(in, {spec.item_shape[0], spec.item_shape[1], spec.item_shape[2]});
  onnx::ValueInfoProto& logits = *g.add_output();
  logits.set_name("logits");
  set_dims(logits, {spec.num_classes});
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f || !model.SerializeToOstream(&f) || !f.flush())
      throw RuntimeError(path + ": could not write the ONNX file");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw RuntimeError(path + ": could not move " + tmp + " into place");
}

}  // namespace zotrain

#else  // built without ONNX

namespace zotrain {

bool onnx_supported() {
  return false;
}

OnnxModel read_onnx(const std::string& path) {
  ZT_THROW(InputError(path + ": this zotrain was built without ONNX support (Debian: libonnx-dev, "
                             "libprotobuf-dev; ZOTRAIN_WITH_ONNX)"));
}

void write_onnx(const std::string& path, const ModelSpec&, const TensorFile&) {
  read_onnx(path);  // the same refusal
}

}  // namespace zotrain

#endif

namespace zotrain {

bool is_onnx_path(const std::string& model) {
  return model.size() > 5 && model.compare(model.size() - 5, 5, ".onnx") == 0;
}

}  // namespace zotrain
