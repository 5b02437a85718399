// Reading a TrainConfig from a TOML file whose keys are the config keys (train/config.h).
#pragma once

#include <string>

#include "zotrain/train/config.h"

namespace zotrain::tools {

// Applies the keys of the TOML file at `path` to `cfg`; InputError naming the file and key for
// a missing file, a syntax error, an unknown key or a value of the wrong type.
void apply_config_file(const std::string& path, TrainConfig& cfg);

}  // namespace zotrain::tools
