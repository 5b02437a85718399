// Python values to zotrain's: paths, and numpy images and labels to a Dataset.
#include <algorithm>

#include "bindings.h"
#include "zotrain/core/error.h"

namespace zotrain::python {

std::string type_name(py::handle v) {
  return py::str(py::type::handle_of(v).attr("__name__"));
}

namespace {

py::array as_array(const std::string& what, py::handle v) {
  if (!py::isinstance<py::array>(v))
    throw InputError(what + ": expected a numpy array, got " + type_name(v));
  return py::reinterpret_borrow<py::array>(v);
}

std::string shape_of(const py::array& a) {
  std::string s = "[";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + "]";
}

}  // namespace

std::string path_of(const std::string& what, py::handle v) {
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::hasattr(v, "__fspath__")) {
    py::object p = v.attr("__fspath__")();
    if (py::isinstance<py::str>(p)) return p.cast<std::string>();
  }
  throw InputError(what + ": expected a string or a path, got " + type_name(v) + " " +
                   std::string(py::repr(v)));
}

bool is_pixels(py::handle x) {
  return py::isinstance<py::array>(x) &&
         py::reinterpret_borrow<py::array>(x).dtype().is(py::dtype::of<uint8_t>());
}

int max_label(const std::string& what, py::handle labels) {
  const py::array a = as_array(what + " labels", labels);
  if (a.dtype().kind() != 'i' && a.dtype().kind() != 'u')
    throw InputError(what + " labels: expected integer classes, got dtype " +
                     std::string(py::str(a.dtype())));
  if (a.ndim() != 1)
    throw InputError(what + " labels: expected one dimension [N], got shape " + shape_of(a));
  const auto l = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
  int64_t most = -1;
  for (py::ssize_t i = 0; i < l.size(); ++i) {
    const int64_t v = l.data()[i];
    if (v < 0 || v > 255)
      throw InputError(what + " labels: class " + std::to_string(v) + " at " + std::to_string(i) +
                       " is not in [0, 255]");
    most = std::max(most, v);
  }
  return static_cast<int>(most);
}

Dataset images_from(const std::string& what, py::handle x, py::handle labels, int num_classes) {
  const py::array a = as_array(what + " images", x);
  if (!is_pixels(a))
    throw InputError(what +
                     " images: expected uint8 pixels (zotrain keeps images as bytes, as a "
                     "device does, and normalizes them as it trains), got dtype " +
                     std::string(py::str(a.dtype())) +
                     "; float inputs are taken by forward(), evaluate() and step()");
  if (a.ndim() != 3 && a.ndim() != 4)
    throw InputError(what + " images: expected [N, H, W] or [N, C, H, W], got shape " +
                     shape_of(a));
  const bool labeled = !labels.is_none();
  const int top = labeled ? max_label(what, labels) : -1;
  const py::ssize_t n = a.shape(0);
  if (labeled && py::reinterpret_borrow<py::array>(labels).size() != n)
    throw InputError(what + ": " + std::to_string(n) + " images but " +
                     std::to_string(py::reinterpret_borrow<py::array>(labels).size()) + " labels");
  Dataset d;
  d.name = what;
  d.item_shape =
      a.ndim() == 3 ? Shape{1, a.shape(1), a.shape(2)} : Shape{a.shape(1), a.shape(2), a.shape(3)};
  d.num_classes = num_classes ? num_classes : std::max(2, top + 1);
  if (top >= d.num_classes)
    throw InputError(what + " labels: class " + std::to_string(top) + " with " +
                     std::to_string(d.num_classes) + " classes");
  const auto px = py::array_t<uint8_t, py::array::c_style>::ensure(a);
  d.pixels.assign(px.data(), px.data() + px.size());
  d.labels.resize(static_cast<size_t>(n));
  if (!labeled) return d;
  const auto l = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(labels);
  std::transform(l.data(), l.data() + n, d.labels.begin(),
                 [](int64_t v) { return static_cast<uint8_t>(v); });
  return d;
}

py::tuple to_numpy(const Dataset& d) {
  const Shape& s = d.item_shape;
  py::array_t<uint8_t> x({static_cast<py::ssize_t>(d.size()), static_cast<py::ssize_t>(s[0]),
                          static_cast<py::ssize_t>(s[1]), static_cast<py::ssize_t>(s[2])});
  py::array_t<uint8_t> y(static_cast<py::ssize_t>(d.size()));
  std::copy(d.pixels.begin(), d.pixels.end(), x.mutable_data());
  std::copy(d.labels.begin(), d.labels.end(), y.mutable_data());
  return py::make_tuple(x, y);
}

}  // namespace zotrain::python
