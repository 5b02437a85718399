// zotrain.Config: TrainConfig with its keys as attributes, resolved as the CLI resolves flags.
#include <pybind11/stl.h>

#include <type_traits>

#include "bindings.h"
#include "config_file.h"
#include "zotrain/core/error.h"

namespace zotrain::python {

namespace {

[[noreturn]] void wrong_type(const std::string& key, py::handle v, const std::string& expected) {
  throw InputError("config key '" + key + "': expected " + expected + ", got " + type_name(v) +
                   " " + std::string(py::repr(v)));
}

template <typename T>
void assign(T& field, const std::string& key, py::handle v) {
  if constexpr (Named<T>) {
    if (!py::isinstance<py::str>(v)) wrong_type(key, v, names_of<T>());
    field = parse_name<T>("config key '" + key + "'", v.cast<std::string>());
  } else if constexpr (std::is_same_v<T, std::string>) {
    field = path_of("config key '" + key + "'", v);
  } else if constexpr (std::is_same_v<T, bool>) {
    // true/false, or 1/0 as config files and flags take them.
    if (py::isinstance<py::bool_>(v)) {
      field = v.cast<bool>();
    } else if (py::isinstance<py::int_>(v) &&
               (v.cast<py::int_>().equal(py::int_(0)) || v.cast<py::int_>().equal(py::int_(1)))) {
      field = v.cast<int>() == 1;
    } else {
      wrong_type(key, v, "a bool (or 1/0)");
    }
  } else if constexpr (std::is_integral_v<T>) {
    if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v))
      wrong_type(key, v, "an integer");
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    if (overflow || !field_holds<T>(i))
      throw InputError("config key '" + key + "': " + std::string(py::repr(v)) + " is not in " +
                       field_range<T>());
    field = static_cast<T>(i);
  } else {
    static_assert(std::is_same_v<T, double>);
    if (!(py::isinstance<py::float_>(v) || py::isinstance<py::int_>(v)) ||
        py::isinstance<py::bool_>(v))
      wrong_type(key, v, "a number");
    field = v.cast<double>();
  }
}

template <typename T>
py::object value_of(const T& field) {
  if constexpr (Named<T>)
    return py::str(name_of(field));
  else
    return py::cast(field);
}

std::string known_keys() {
  std::string s;
  for (const std::string& k : config_keys()) s += (s.empty() ? "" : ", ") + k;
  return s;
}

py::object get_key(const TrainConfig& cfg, const std::string& key) {
  py::object out;
  visit_config(cfg, [&](const char* k, const auto& field, const char*) {
    if (k == key) out = value_of(field);
  });
  if (!out) throw py::attribute_error("zotrain.Config has no key '" + key + "'");
  return out;
}

py::dict to_dict(const TrainConfig& cfg) {
  py::dict d;
  visit_config(cfg, [&](const char* k, const auto& field, const char*) { d[k] = value_of(field); });
  return d;
}

}  // namespace

void set_key(TrainConfig& cfg, const std::string& key, py::handle value) {
  bool found = false;
  visit_config(cfg, [&](const char* k, auto& field, const char*) {
    if (k == key) assign(field, key, value), found = true;
  });
  if (!found) throw InputError("unknown config key '" + key + "'; the keys are " + known_keys());
}

TrainConfig resolve_config(const std::string& file, const py::dict& keys) {
  return resolve_with_defaults([&](TrainConfig& cfg) {
    if (!file.empty()) tools::apply_config_file(file, cfg);
    for (const auto& [k, v] : keys) set_key(cfg, py::str(k), v);
  });
}

void bind_config(py::module_& m) {
  py::class_<TrainConfig>(m, "Config", R"(A training configuration: every key of the CLI's flags and
config files (zotrain.config_keys()), as attributes.

Config(config=None, **keys) resolves as `zotrain train` does: the defaults of the chosen method
and precision, then the TOML file `config`, then the keys given. Values have their keys' types:
str, int, float, bool, or a name for the named keys (method="zo", precision="int8").)")
      .def(py::init([](py::object file, py::kwargs keys) {
             return resolve_config(file.is_none() ? "" : path_of("config", file), keys);
           }),
           py::arg("config") = py::none())
      .def("__getattr__", &get_key)
      .def("__setattr__",
           [](TrainConfig& cfg, const std::string& key, py::handle v) { set_key(cfg, key, v); })
      .def("__getitem__", &get_key)
      .def("__setitem__",
           [](TrainConfig& cfg, const std::string& key, py::handle v) { set_key(cfg, key, v); })
      .def("__dir__", [](const TrainConfig&) { return config_keys(); })
      .def("keys", [](const TrainConfig&) { return config_keys(); })
      .def("to_dict", &to_dict, "The keys and values as a dict.")
      .def("to_json", &config_to_json, "The config as summary.json and checkpoints hold it.")
      .def_static(
          "from_json", [](const std::string& json) { return config_from_json(json, "json"); },
          "A config from its JSON (to_json, or a run's summary.json \"config\").")
      .def("validate", &validate, "Raises InputError naming the first key with a bad value.")
      .def("copy", [](const TrainConfig& cfg) { return cfg; })
      .def("__copy__", [](const TrainConfig& cfg) { return cfg; })
      .def("__deepcopy__", [](const TrainConfig& cfg, py::handle) { return cfg; })
      .def("__eq__", [](const TrainConfig& a,
                        const TrainConfig& b) { return config_to_json(a) == config_to_json(b); })
      .def("__repr__", [](const TrainConfig& cfg) {
        // The keys that differ from their method and precision's defaults.
        const TrainConfig base = defaults_for(cfg.method, cfg.precision);
        const py::dict now = to_dict(cfg), was = to_dict(base);
        std::string s = "zotrain.Config(method='" + std::string(name_of(cfg.method)) +
                        "', precision='" + name_of(cfg.precision) + "'";
        for (const auto& [k, v] : now)
          if (!v.equal(was[k]))
            s += ", " + std::string(py::str(k)) + "=" + std::string(py::repr(v));
        return s + ")";
      });
  m.def("config_keys", &config_keys, "The names of every config key.");
}

}  // namespace zotrain::python
