// zotrain.Trainer: a run on a named data set or on numpy arrays, trained whole (run) or a step at
// a time, with its logits, parameters (numpy views), memory plan and checkpoints.
#include "zotrain/train/trainer.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "bindings.h"
#include "zotrain/core/error.h"
#include "zotrain/train/export.h"

namespace zotrain::python {

namespace {

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

// (images, labels) from a tuple or list of two.
std::pair<py::object, py::object> pair_of(const std::string& what, const py::object& v) {
  if (!(py::isinstance<py::tuple>(v) || py::isinstance<py::list>(v)) || py::len(v) != 2)
    throw InputError(what + ": expected a pair (images, labels)");
  return {v[py::int_(0)], v[py::int_(1)]};
}

// The examples given as numpy arrays: train required, val and test may be None (empty).
RunData arrays_data(const py::object& train, const py::object& val, const py::object& test,
                    int classes) {
  const auto [x, y] = pair_of("train", train);
  int top = max_label("train", y);
  for (const auto& [what, v] : {std::pair{"val", val}, std::pair{"test", test}})
    if (!v.is_none()) top = std::max(top, max_label(what, pair_of(what, v).second));
  if (classes == 0) classes = std::max(2, top + 1);
  DataSplits s;
  s.train = images_from("train", x, y, classes);
  for (auto [what, v, d] : {std::tuple{"val", &val, &s.val}, std::tuple{"test", &test, &s.test}}) {
    if (v->is_none()) {
      d->name = what, d->item_shape = s.train.item_shape, d->num_classes = classes;
      continue;
    }
    const auto [vx, vy] = pair_of(what, *v);
    *d = images_from(what, vx, vy, classes);
    if (d->item_shape != s.train.item_shape)
      throw InputError(std::string(what) + " images: shape " + d->item_shape.str() +
                       ", train's are " + s.train.item_shape.str());
  }
  if (s.train.size() == 0) throw InputError("train: no examples");
  return RunData(std::move(s));
}

// The dimensions of a shape without its 1s: [N, H, W] inputs fit an item {1, H, W}.
std::vector<int64_t> squeezed(const int64_t* dims, int rank) {
  std::vector<int64_t> out;
  for (int i = 0; i < rank; ++i)
    if (dims[i] != 1) out.push_back(dims[i]);
  return out;
}

// A caller's batch as the run takes it: uint8 images (normalized as the run's) or float inputs
// (as they are), with labels (or None). The source views `keep`'s arrays.
struct Batch {
  Dataset images;
  FloatArray inputs;
  std::vector<uint8_t> labels;
  int64_t n = 0;
  std::unique_ptr<BatchSource> source;
};

std::unique_ptr<Batch> batch_of(const std::string& what, const Trainer& t, py::handle x,
                                py::handle labels) {
  auto b = std::make_unique<Batch>();
  const RunData& data = t.data();
  const int64_t batch = t.config().batch;
  const int classes = data.num_classes();
  if (is_pixels(x)) {
    b->images = images_from(what, x, labels, classes);
    b->n = b->images.size();
    b->source = data.batches_of(b->images, batch);
    return b;
  }
  if (!py::isinstance<py::array>(x) || py::reinterpret_borrow<py::array>(x).dtype().kind() != 'f')
    throw InputError(what + ": expected a numpy array of uint8 pixels or of floats, got " +
                     std::string(py::repr(py::type::handle_of(x))));
  b->inputs = FloatArray::ensure(x);
  const Shape item = data.item_shape();
  const py::ssize_t rank = b->inputs.ndim();
  std::vector<int64_t> dims(b->inputs.shape(), b->inputs.shape() + rank);
  if (rank < 2 || squeezed(dims.data() + 1, static_cast<int>(rank - 1)) !=
                      squeezed(item.dim.data(), item.rank)) {
    std::string got;
    for (int64_t d : dims) got += (got.empty() ? "" : ", ") + std::to_string(d);
    throw InputError(what + ": float inputs of shape [" + got + "], expected [N, " +
                     item.str().substr(1));
  }
  b->n = dims[0];
  if (!labels.is_none()) {
    const int top = max_label(what, labels);
    const auto l = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(labels);
    if (l.size() != b->n)
      throw InputError(what + ": " + std::to_string(b->n) + " inputs but " +
                       std::to_string(l.size()) + " labels");
    if (top >= classes)
      throw InputError(what + " labels: class " + std::to_string(top) + ", the run has " +
                       std::to_string(classes) + " classes");
    b->labels.assign(l.data(), l.data() + l.size());
  }
  b->source = input_batches(b->inputs.data(), b->labels.empty() ? nullptr : b->labels.data(), b->n,
                            item.numel(), batch, data.int8_exp());
  return b;
}

FloatArray forward(Trainer& t, py::handle x) {
  const std::unique_ptr<Batch> b = batch_of("forward", t, x, py::none());
  FloatArray logits(
      {static_cast<py::ssize_t>(b->n), static_cast<py::ssize_t>(t.data().num_classes())});
  float* out = logits.mutable_data();
  py::gil_scoped_release release;
  t.predict(*b->source, out);
  return logits;
}

double evaluate(Trainer& t, py::handle x, py::handle labels) {
  const FloatArray logits = forward(t, x);
  const auto l = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(labels);
  const int64_t n = logits.shape(0), c = logits.shape(1);
  if (!l || l.ndim() != 1 || l.size() != n)
    throw InputError("evaluate: expected " + std::to_string(n) + " integer labels");
  int64_t correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = logits.data() + i * c;
    correct += std::max_element(row, row + c) - row == l.data()[i];  // first maximum, as zotrain
  }
  return n ? static_cast<double>(correct) / static_cast<double>(n) : 0.0;
}

py::dict step(Trainer& t, py::handle x, py::handle labels, int epoch) {
  if (labels.is_none()) throw InputError("step: labels are required");
  const std::unique_ptr<Batch> b = batch_of("step", t, x, labels);
  if (b->n < 1 || b->n > t.config().batch)
    throw InputError("step: " + std::to_string(b->n) +
                     " examples; a step takes 1 to batch = " + std::to_string(t.config().batch));
  StepResult r;
  {
    py::gil_scoped_release release;
    r = t.step(*b->source, epoch);
  }
  py::dict d;
  d["loss"] = r.loss;
  d["correct"] = r.correct;
  d["rows"] = b->n;
  d["forward_passes"] = r.forward_passes;
  d["backward_passes"] = r.backward_passes;
  if (r.signs) d["signs"] = r.signs, d["zero_signs"] = r.zero_signs;
  return d;
}

py::array view(const ParamView& p, py::handle owner) {
  std::vector<py::ssize_t> shape(p.shape.dim.begin(), p.shape.dim.begin() + p.shape.rank);
  py::array a = p.type == ParamView::Type::kF32
                    ? py::array(py::dtype::of<float>(), shape, {}, p.data, owner)
                    : py::array(py::dtype::of<int8_t>(), shape, {}, p.data, owner);
  if (!p.writable) a.attr("setflags")(py::arg("write") = false);
  return a;
}

void set(Trainer& t, const std::string& name, py::handle value) {
  const ParamView p = t.parameter(name);
  if (!py::isinstance<py::array>(value))
    value = py::array(py::reinterpret_borrow<py::object>(value));
  const py::array a = py::reinterpret_borrow<py::array>(value);
  std::vector<py::ssize_t> want(p.shape.dim.begin(), p.shape.dim.begin() + p.shape.rank);
  if (std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()) != want)
    throw InputError("parameter " + name + ": expected shape " + p.shape.str() + ", got " +
                     std::string(py::str(py::tuple(
                         py::cast(std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()))))));
  if (p.type == ParamView::Type::kF32) {
    t.set_parameter(name, FloatArray::ensure(a).data());
    return;
  }
  if (a.dtype().kind() != 'i' && a.dtype().kind() != 'u')
    throw InputError("parameter " + name + ": int8 mantissas need integers, got dtype " +
                     std::string(py::str(a.dtype())));
  const auto v = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
  std::vector<int8_t> m(static_cast<size_t>(v.size()));
  for (py::ssize_t i = 0; i < v.size(); ++i) {
    if (v.data()[i] < -127 || v.data()[i] > 127)
      throw InputError("parameter " + name + ": mantissa " + std::to_string(v.data()[i]) + " at " +
                       std::to_string(i) + " is not in [-127, 127]");
    m[static_cast<size_t>(i)] = static_cast<int8_t>(v.data()[i]);
  }
  t.set_parameter(name, m.data());
}

py::dict memory_plan(const Trainer& t) {
  const MemoryReport r = memory_report(t.config(), t.data().item_shape(), t.data().num_classes());
  py::dict d = py::module_::import("json").attr("loads")(memory_report_json(r));
  d["arena_bytes"] = t.arena().total_bytes();
  return d;
}

py::dict state(const Trainer& t) {
  const TrainState& s = t.state();
  return py::dict(py::arg("epochs_done") = s.epochs_done, py::arg("steps") = s.steps,
                  py::arg("forward_passes") = s.forward_passes,
                  py::arg("backward_passes") = s.backward_passes, py::arg("seconds") = s.seconds,
                  py::arg("best_val_acc") = s.best_val_acc, py::arg("best_epoch") = s.best_epoch);
}

py::list run(Trainer& t, py::object on_epoch, py::object on_batch) {
  const py::object loads = py::module_::import("json").attr("loads");
  py::list metrics;
  TrainCallbacks cb;
  // Every batch gives Python a chance to see Ctrl-C (KeyboardInterrupt ends the run there; the
  // last epoch's checkpoint stays).
  cb.on_batch = [&](int epoch, int64_t b, int64_t n, double loss) {
    py::gil_scoped_acquire acquire;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (!on_batch.is_none()) on_batch(epoch, b, n, loss);
  };
  cb.on_epoch = [&](const EpochReport& r) {
    py::gil_scoped_acquire acquire;
    py::object line = loads(r.metrics);
    metrics.append(line);
    if (!on_epoch.is_none()) on_epoch(line);
  };
  py::gil_scoped_release release;
  t.run(cb);
  return metrics;
}

std::unique_ptr<Trainer> make(const TrainConfig& cfg, const py::object& train,
                              const py::object& val, const py::object& test, int classes) {
  if (train.is_none()) {
    if (!val.is_none() || !test.is_none())
      throw InputError("val and test arrays need train arrays too (or none: config key data)");
    py::gil_scoped_release release;
    return std::make_unique<Trainer>(cfg);
  }
  RunData data = arrays_data(train, val, test, classes);
  py::gil_scoped_release release;
  return std::make_unique<Trainer>(cfg, std::move(data));
}

// A run continued from its checkpoint, as `zotrain train --resume` does: only epochs, threads
// and out may change.
std::unique_ptr<Trainer> from_checkpoint(py::handle where, const py::object& train,
                                         const py::object& val, const py::object& test,
                                         py::kwargs changes) {
  std::filesystem::path path = path_of("checkpoint", where);
  if (std::filesystem::is_directory(path)) path /= "checkpoint.bin";
  const Checkpoint ckpt = read_checkpoint(path.string());
  TrainConfig cfg = ckpt.meta.config;
  cfg.out = path.parent_path().string();
  for (const auto& [k, v] : changes) {
    const std::string key = py::str(k);
    if (key != "epochs" && key != "threads" && key != "out")
      throw InputError(key + " cannot be changed when resuming (the checkpoint " + path.string() +
                       " continues its run's config; epochs, threads and out may change)");
    set_key(cfg, key, v);
  }
  std::unique_ptr<Trainer> t;
  if (train.is_none()) {
    t = make(cfg, train, val, test, 0);
  } else {
    RunData data = arrays_data(train, val, test, static_cast<int>(ckpt.meta.num_classes));
    data.set_normalization(ckpt.meta.norm);  // the run's, whatever arrays come now
    t = std::make_unique<Trainer>(cfg, std::move(data));
  }
  t->resume(ckpt);
  return t;
}

}  // namespace

void bind_trainer(py::module_& m) {
  py::class_<Trainer, std::unique_ptr<Trainer>>(m, "Trainer", R"(A training run.

Trainer(config, train=None, val=None, test=None, classes=0): on the data set the config names
(key data), or on numpy arrays: train=(images, labels) and optionally val and test, images uint8
[N, H, W] or [N, C, H, W], labels integer classes (classes: their count, else max + 1). The model
is config.model: a built-in name or an ONNX file; config.init starts from a checkpoint.)")
      .def(py::init(&make), py::arg("config"), py::arg("train") = py::none(),
           py::arg("val") = py::none(), py::arg("test") = py::none(), py::arg("classes") = 0)
      .def_static("from_checkpoint", &from_checkpoint, py::arg("checkpoint"),
                  py::arg("train") = py::none(), py::arg("val") = py::none(),
                  py::arg("test") = py::none(),
                  "The run of a checkpoint (a run folder or its checkpoint.bin), ready to go on "
                  "(run) or to use; keyword changes: epochs, threads, out.")
      .def("run", &run, py::arg("on_epoch") = py::none(), py::arg("on_batch") = py::none(),
           "Trains up to config.epochs, writing config.out as the CLI does; returns each epoch's "
           "metrics (its metrics.jsonl line as a dict), also passed to on_epoch(metrics). "
           "on_batch(epoch, batch, batches, mean_loss) after every step.")
      .def("forward", &forward, py::arg("x"),
           "Logits [N, classes] in evaluation mode, float32: x uint8 images (normalized as the "
           "run's) or float inputs [N, *input_shape] as they are.")
      .def("evaluate", &evaluate, py::arg("x"), py::arg("labels"),
           "The share of x classified as labels.")
      .def("step", &step, py::arg("x"), py::arg("labels"), py::arg("epoch") = 0,
           "One optimizer step of the run's method on a batch of at most config.batch examples, "
           "with the learning rates and schedules of `epoch` (0-based); its loss and counts.")
      .def(
          "parameters",
          [](py::object self) {
            py::dict d;
            for (const ParamView& p : self.cast<Trainer&>().parameters())
              d[py::str(p.name)] = view(p, self);
            return d;
          },
          "Every parameter as a numpy view of the run's own memory (no copy): float32, or an "
          "int8 run's weight mantissas (see exponents()); int8-npu's are read-only (use set).")
      .def(
          "get",
          [](py::object self, const std::string& name) {
            return view(self.cast<Trainer&>().parameter(name), self);
          },
          py::arg("name"), "One parameter's view.")
      .def("set", &set, py::arg("name"), py::arg("value"), "Copies an array into a parameter.")
      .def(
          "exponents",
          [](Trainer& t) {
            py::dict d;
            for (const ParamView& p : t.parameters())
              if (p.type == ParamView::Type::kS8) d[py::str(p.name)] = p.exp;
            return d;
          },
          "An int8 run's weight exponents (value = mantissa * 2**exponent), by name.")
      .def("memory_plan", &memory_plan,
           "The run's memory plan as `zotrain memory --json` gives it (rows, buckets, "
           "total_bytes, Full ZO, Full BP and inference totals), and the arena's bytes.")
      .def(
          "save", [](Trainer& t, py::handle path) { t.save(path_of("save", path)); },
          py::arg("path"), "Writes a checkpoint of the run now, atomically.")
      .def(
          "export_onnx",
          [](Trainer& t, py::handle path) {
            return export_onnx(t.checkpoint(), path_of("export_onnx", path));
          },
          py::arg("path"), "Writes the model as ONNX (as `zotrain export`); says what it wrote.")
      .def_property_readonly("config", &Trainer::config)
      .def_property_readonly("state", &state)
      .def_property_readonly("head", &Trainer::head,
                             "The first layer trained by backprop (num_layers when none).")
      .def_property_readonly("bp_layers", &Trainer::bp_layers)
      .def_property_readonly("first_trained_layer", &Trainer::first_trained_layer)
      .def_property_readonly("q", &Trainer::q)
      .def_property_readonly("num_layers",
                             [](const Trainer& t) { return t.network().num_layers(); })
      .def_property_readonly("classes", [](const Trainer& t) { return t.data().num_classes(); })
      .def_property_readonly("input_shape",
                             [](const Trainer& t) {
                               const Shape s = t.data().item_shape();
                               return std::vector<int64_t>(s.dim.begin(), s.dim.begin() + s.rank);
                             })
      .def_property_readonly("layers", [](const Trainer& t) {
        std::vector<std::string> out;
        for (int i = 0; i < t.network().num_layers(); ++i)
          out.push_back(t.network().layer(i).describe());
        return out;
      });
}

}  // namespace zotrain::python
