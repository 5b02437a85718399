#include "config_file.h"

#include <algorithm>
#include <filesystem>
#include <toml.hpp>
#include <type_traits>

#include "zotrain/core/error.h"

namespace zotrain::tools {

void apply_config_file(const std::string& path, TrainConfig& cfg) {
  if (!std::filesystem::is_regular_file(path)) throw InputError(path + ": config file not found");
  toml::value data;
  try {
    data = toml::parse(path);
  } catch (const std::exception& e) {
    // toml11 draws the error's location over several lines; keep to one.
    std::string msg;
    for (char c : std::string(e.what())) {
      if (c == '\n') c = ' ';
      if (c != ' ' || (!msg.empty() && msg.back() != ' ')) msg += c;
    }
    throw InputError(path + ": not valid TOML: " + msg);
  }
  if (!data.is_table()) throw InputError(path + ": expected a table of config keys");
  size_t used = 0;
  visit_config(cfg, [&](const char* key, auto& field, const char*) {
    if (!data.contains(key)) return;
    ++used;
    using T = std::remove_reference_t<decltype(field)>;
    const toml::value& v = data.at(key);
    auto wrong = [&](const std::string& expected) {
      return InputError(path + ": config key '" + key + "' must be " + expected);
    };
    if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) throw wrong("a string");
      field = v.as_string().str;
    } else if constexpr (Named<T>) {
      if (!v.is_string()) throw wrong(("one of the strings " + names_of<T>()).c_str());
      field = parse_name<T>(path + ": config key '" + key + "'", v.as_string().str);
    } else if constexpr (std::is_same_v<T, bool>) {
      // 0 and 1 as the configs written before the flags were booleans have them.
      if (v.is_boolean())
        field = v.as_boolean();
      else if (v.is_integer() && (v.as_integer() == 0 || v.as_integer() == 1))
        field = v.as_integer() == 1;
      else
        throw wrong("true or false (or 1 or 0)");
    } else if constexpr (std::is_integral_v<T>) {
      if (!v.is_integer()) throw wrong("an integer");
      const int64_t i = v.as_integer();
      if (!field_holds<T>(i)) throw wrong("an integer in " + field_range<T>());
      field = static_cast<T>(i);
    } else {
      if (!v.is_floating() && !v.is_integer()) throw wrong("a number");
      field = v.is_floating() ? v.as_floating() : static_cast<double>(v.as_integer());
    }
  });
  if (used != data.as_table().size()) {
    auto keys = config_keys();
    for (const auto& [key, value] : data.as_table())
      if (std::find(keys.begin(), keys.end(), key) == keys.end())
        throw InputError(path + ": unknown config key '" + key + "'");
  }
}

}  // namespace zotrain::tools
