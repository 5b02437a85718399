// The config keys as CLI flags (--weight-decay for weight_decay), shared by the commands that
// take a training config (train, memory): defaults, then a TOML file, then the flags given.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "zotrain/core/shape.h"
#include "zotrain/train/config.h"

namespace zotrain::tools {

struct ConfigOptions {
  std::string config_file;
  TrainConfig flags;                            // values given on the command line
  std::map<std::string, CLI::Option*> options;  // by config key

  bool given(const std::string& key) const { return options.at(key)->count() > 0; }
  // `base` (a resumed run's config), then --config FILE, then the flags given.
  TrainConfig resolve(const TrainConfig& base) const;
  // A new run: the defaults of its method and precision (as the file or the flags set them),
  // then --config FILE, then the flags given (resolve_with_defaults).
  TrainConfig resolve() const;
};

// The shape of one input and the class count of the commands that need no data (memory, bench).
struct InputOptions {
  std::vector<int64_t> input{1, 28, 28};
  int64_t classes = 10;
  // The item shape; InputError for sizes that are not 1 to 3 positive integers, or bad classes.
  Shape item_shape() const;
};
void add_input_options(CLI::App* sub, InputOptions& opts);

std::string flag_of(const std::string& key);
// Adds --config and one flag per config key to `sub`.
void add_config_options(CLI::App* sub, ConfigOptions& opts);

}  // namespace zotrain::tools
