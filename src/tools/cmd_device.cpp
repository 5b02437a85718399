// zotrain device: the host's side of the bare-metal device program (device/m55,
// docs/devices.md). `pack` writes the first epoch of a precision int8 run as the device reads
// it; `compare` checks the weights the device wrote against the checkpoint of `zotrain train`.
#include <cstdio>
#include <memory>

#include "commands.h"
#include "config_options.h"
#include "zotrain/core/error.h"
#include "zotrain/train/device_run.h"
#include "zotrain/train/trainer.h"

namespace zotrain::tools {

namespace {

struct PackArgs {
  ConfigOptions config;
  std::string out;
};

struct CompareArgs {
  std::string weights, checkpoint;
};

void run_pack(const PackArgs& a) {
  TrainConfig cfg = a.config.resolve();
  cfg.threads = 1;
  Trainer trainer(cfg);
  const DeviceRunSummary s = trainer.write_device_run(a.out);
  std::printf("%s: %lld steps, %lld examples, %lld bytes\n", a.out.c_str(),
              static_cast<long long>(s.steps), static_cast<long long>(s.examples),
              static_cast<long long>(s.bytes));
}

void run_compare(const CompareArgs& a) {
  int64_t values = 0;
  const std::vector<std::string> diffs = compare_device_weights(a.weights, a.checkpoint, &values);
  for (const std::string& d : diffs) std::printf("differs: %s\n", d.c_str());
  if (!diffs.empty()) ZT_THROW(RuntimeError(a.weights + " and " + a.checkpoint + " differ"));
  std::printf("same bits: %lld values of %s equal %s\n", static_cast<long long>(values),
              a.weights.c_str(), a.checkpoint.c_str());
}

}  // namespace

void add_device_command(CLI::App& app) {
  CLI::App* device =
      app.add_subcommand("device", "pack a run for the device program, check its weights");
  device->require_subcommand(1);
  auto pack = std::make_shared<PackArgs>();
  CLI::App* p = device->add_subcommand(
      "pack", "write the first epoch of a precision int8 run as the device program reads it");
  add_config_options(p, pack->config);
  p->add_option("--file", pack->out, "the run file to write")->required();
  p->callback([pack] { run_pack(*pack); });
  auto compare = std::make_shared<CompareArgs>();
  CLI::App* c = device->add_subcommand(
      "compare", "check the weights the device wrote against a checkpoint, value by value");
  c->add_option("--weights", compare->weights, "the weights file the device program wrote")
      ->required();
  c->add_option("--checkpoint", compare->checkpoint, "checkpoint.bin of zotrain train")->required();
  c->callback([compare] { run_compare(*compare); });
}

}  // namespace zotrain::tools
