#include "config_options.h"

#include <type_traits>
#include <vector>

#include "config_file.h"
#include "zotrain/core/error.h"

namespace zotrain::tools {

void add_input_options(CLI::App* sub, InputOptions& opts) {
  sub->add_option("--input", opts.input, "shape of one input: C,H,W")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--classes", opts.classes, "number of classes")->capture_default_str();
}

Shape InputOptions::item_shape() const {
  if (input.empty() || input.size() > 3)
    throw InputError("--input: expected 1 to 3 sizes like 1,28,28");
  if (classes < 2 || classes > 256) throw InputError("--classes: expected an integer in [2, 256]");
  Shape item;
  for (int64_t d : input) {
    if (d < 1) throw InputError("--input: sizes must be positive");
    item[item.rank++] = d;
  }
  return item;
}

std::string flag_of(const std::string& key) {
  std::string f = key;
  for (char& c : f)
    if (c == '_') c = '-';
  return "--" + f;
}

void add_config_options(CLI::App* sub, ConfigOptions& opts) {
  sub->add_option("--config", opts.config_file, "TOML file of config keys; flags override it");
  visit_config(opts.flags, [&](const char* key, auto& field, const char* help) {
    using T = std::remove_cvref_t<decltype(field)>;
    if constexpr (Named<T>) {
      // By name, with the names in the error a wrong one gets.
      opts.options[key] = sub->add_option_function<std::string>(
                                 flag_of(key),
                                 [&field, key](const std::string& text) {
                                   field = parse_name<T>(flag_of(key), text);
                                 },
                                 help)
                              ->default_str(name_of(field));
    } else {
      CLI::Option* opt = sub->add_option(flag_of(key), field, help)->capture_default_str();
      // CLI11 reads "-1" into an unsigned field as 2^64 - 1.
      if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>)
        opt->check(CLI::NonNegativeNumber);
      opts.options[key] = opt;
    }
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

TrainConfig ConfigOptions::resolve() const {
  return resolve_with_defaults([&](TrainConfig& cfg) { cfg = resolve(cfg); });
}

}  // namespace zotrain::tools
