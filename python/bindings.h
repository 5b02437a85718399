// The pieces of the Python module (module.cpp), one file each: the config (config.cpp), numpy
// arrays to and from zotrain's data (arrays.cpp), the trainer (trainer.cpp).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "zotrain/data/dataset.h"
#include "zotrain/train/config.h"

namespace zotrain::python {

namespace py = pybind11;

void bind_config(py::module_& m);
void bind_trainer(py::module_& m);

// Sets config key `key` from a Python value of its type (str, int, float, bool, or a name for
// the named keys); InputError naming the key and what it takes.
void set_key(TrainConfig& cfg, const std::string& key, py::handle value);
// A config as the CLI resolves it: the defaults of its method and precision, then the TOML file
// (if any), then `keys`.
TrainConfig resolve_config(const std::string& file, const py::dict& keys);

// The name of a Python value's type, for error messages ("str", "float").
std::string type_name(py::handle v);
// A str, or a path (pathlib.Path, any os.PathLike); InputError naming `what` otherwise.
std::string path_of(const std::string& what, py::handle v);

// Images as zotrain holds them: uint8 pixels [N, H, W] (one channel) or [N, C, H, W], labels an
// integer array [N] of classes below num_classes (0: their max + 1, at least 2), or None (all
// 0). `what` names the argument in errors.
Dataset images_from(const std::string& what, py::handle x, py::handle labels, int num_classes);
// The largest label of an integer array (-1 when empty); InputError if not integers in [0, 255].
int max_label(const std::string& what, py::handle labels);
// A Dataset as numpy arrays (copies): (uint8 images [N, C, H, W], uint8 labels [N]).
py::tuple to_numpy(const Dataset& d);
// Whether `x` holds uint8 pixels (else it is taken as float inputs).
bool is_pixels(py::handle x);

}  // namespace zotrain::python
