#include "config_options.h"

#include <type_traits>
#include <vector>

#include "config_file.h"

namespace zotrain::tools {

std::string flag_of(const std::string& key) {
  std::string f = key;
  for (char& c : f)
    if (c == '_') c = '-';
  return "--" + f;
}

void add_config_options(CLI::App* sub, ConfigOptions& opts) {
  sub->add_option("--config", opts.config_file, "TOML file of config keys; flags override it");
  visit_config(opts.flags, [&](const char* key, auto& field, const char* help) {
    opts.options[key] = sub->add_option(flag_of(key), field, help)->capture_default_str();
  });
}

TrainConfig ConfigOptions::resolve(const TrainConfig& base) const {
  TrainConfig cfg = base;
  if (!config_file.empty()) apply_config_file(config_file, cfg);
  // Fields of cfg in visiting order, so the flags' values can be copied field by field.
  std::vector<void*> fields;
  visit_config(cfg, [&](const char*, auto& field, const char*) { fields.push_back(&field); });
  size_t i = 0;
  visit_config(flags, [&](const char* key, const auto& field, const char*) {
    using T = std::remove_cvref_t<decltype(field)>;
    if (given(key)) *static_cast<T*>(fields[i]) = field;
    ++i;
  });
  return cfg;
}

}  // namespace zotrain::tools
