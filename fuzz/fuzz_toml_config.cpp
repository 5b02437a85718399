// A TOML config file, read and then validated as `zotrain train --config` does.
#include "fuzz_file.h"
#include "tools/config_file.h"
#include "zotrain/train/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return zotrain::fuzz::on_file(data, size, ".toml", [](const std::string& p) {
    zotrain::TrainConfig cfg;
    zotrain::tools::apply_config_file(p, cfg);
    zotrain::validate(cfg);
  });
}
