// import zotrain: the library from Python (docs/python.md). zotrain's InputError is
// zotrain.InputError (a ValueError), with the CLI's messages.
#include <pybind11/stl.h>

#include "bindings.h"
#include "kernels/isa.h"
#include "zotrain/core/error.h"
#include "zotrain/data/registry.h"
#include "zotrain/dist/world.h"
#include "zotrain/models/model.h"
#include "zotrain/models/onnx.h"
#include "zotrain/train/export.h"
#include "zotrain/train/trainer.h"

namespace zotrain::python {

namespace {

double evaluate_checkpoint_on(py::handle checkpoint, py::object data, int64_t batch, int threads) {
  const Checkpoint ckpt = read_checkpoint(path_of("checkpoint", checkpoint));
  const std::string name = data.is_none() ? "" : path_of("data", data);
  py::gil_scoped_release release;
  return evaluate_checkpoint(ckpt, name, batch, threads);
}

}  // namespace

}  // namespace zotrain::python

PYBIND11_MODULE(zotrain, m) {
  namespace py = pybind11;
  using namespace zotrain;
  using namespace zotrain::python;
  m.doc() =
      "zotrain: training by forward passes (zeroth-order, ElasticZO, integer-only) from Python";
  m.attr("__version__") = ZOTRAIN_VERSION;
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
  bind_config(m);
  bind_trainer(m);
  m.def(
      "load_data",
      [](py::handle name, int64_t val_size, int64_t train_limit, uint64_t seed,
         int64_t test_limit) {
        DataSplits s;
        const std::string path = path_of("name", name);
        {
          py::gil_scoped_release release;
          s = load_data(path, {val_size, train_limit, seed, test_limit});
        }
        return py::dict(py::arg("train") = to_numpy(s.train), py::arg("val") = to_numpy(s.val),
                        py::arg("test") = to_numpy(s.test));
      },
      py::arg("name"), py::arg("val_size") = 5000, py::arg("train_limit") = 0, py::arg("seed") = 0,
      py::arg("test_limit") = 0,
      "An image data set by name or folder, split as a run with these config keys splits it: "
      "{'train', 'val', 'test'} each (uint8 images [N, C, H, W], uint8 labels [N]), ready for "
      "Trainer(config, **splits).");
  m.def(
      "data_dir", [](py::handle name) { return resolve_data_dir(path_of("name", name)); },
      py::arg("name"), "The folder a data set name resolves to (InputError when it is missing).");
  m.def(
      "memory_plan",
      [](const TrainConfig& cfg, const std::vector<int64_t>& input, int64_t classes) {
        if (input.empty() || input.size() > 3)
          throw InputError("input: expected 1 to 3 sizes like (1, 28, 28)");
        Shape item;
        for (int64_t d : input) item[item.rank++] = d;
        return py::module_::import("json").attr("loads")(
            memory_report_json(memory_report(cfg, item, classes)));
      },
      py::arg("config"), py::arg("input") = std::vector<int64_t>{1, 28, 28},
      py::arg("classes") = 10,
      "The memory plan of a configuration for inputs of shape `input`, without data: as "
      "`zotrain memory --json`.");
  m.def("models", &model_names, "The built-in model names (an ONNX file's path works too).");
  m.def(
      "info",
      [] {
        return py::dict(
            py::arg("version") = ZOTRAIN_VERSION,
            py::arg("kernel_set") = kernels::kernel_isa_name(kernels::active_kernel_isa()),
            py::arg("onnx") = onnx_supported(), py::arg("mpi") = dist::World::has_mpi());
      },
      "The build: version, kernel set in use, whether ONNX files and MPI are supported.");
  m.def("evaluate_checkpoint", &evaluate_checkpoint_on, py::arg("checkpoint"),
        py::arg("data") = py::none(), py::arg("batch") = 256, py::arg("threads") = 1,
        "Test accuracy of a checkpoint on its data set (or `data`), as `zotrain eval`.");
  m.def(
      "export_onnx",
      [](py::handle checkpoint, py::handle out) {
        return export_onnx(read_checkpoint(path_of("checkpoint", checkpoint)), path_of("out", out));
      },
      py::arg("checkpoint"), py::arg("out"),
      "Writes a checkpoint's model as ONNX, as `zotrain export`; says what it wrote.");
}
