#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <type_traits>

#include "commands.h"
#include "config_file.h"
#include "progress.h"
#include "zotrain/core/error.h"
#include "zotrain/train/trainer.h"

namespace zotrain::tools {

namespace {

std::string flag_of(const std::string& key) {
  std::string f = key;
  for (char& c : f)
    if (c == '_') c = '-';
  return "--" + f;
}

struct TrainArgs {
  std::string config_file, resume_dir;
  TrainConfig flags;                      // values given on the command line
  std::map<std::string, CLI::Option*> options;  // by config key
};

// Defaults, then the config file (or the resumed run's config), then the flags given.
TrainConfig resolve(const TrainArgs& a, const TrainConfig& base) {
  TrainConfig cfg = base;
  std::vector<void*> fields;
  visit_config(cfg, [&](const char*, auto& field, const char*) { fields.push_back(&field); });
  size_t i = 0;
  visit_config(a.flags, [&](const char* key, const auto& field, const char*) {
    using T = std::remove_cvref_t<decltype(field)>;
    if (a.options.at(key)->count()) *static_cast<T*>(fields[i]) = field;
    ++i;
  });
  return cfg;
}

void run_train(const TrainArgs& a) {
  if (!a.resume_dir.empty()) {
    if (!a.config_file.empty()) throw InputError("--config cannot be combined with --resume");
    // Only the length of the run and the thread count may change on resume; anything else
    // would not be a continuation of the same run.
    for (const auto& [key, opt] : a.options)
      if (opt->count() && key != "epochs" && key != "threads" && key != "out")
        throw InputError(flag_of(key) + " cannot be changed when resuming (--resume " +
                         a.resume_dir + " continues that run's config)");
    Checkpoint ckpt = read_checkpoint(a.resume_dir + "/checkpoint.bin");
    TrainConfig cfg = resolve(a, ckpt.meta.config);
    if (!a.options.at("out")->count()) cfg.out = a.resume_dir;
    Trainer trainer(cfg);
    trainer.resume(ckpt);
    std::printf("resuming %s after epoch %d of %d\n", a.resume_dir.c_str(),
                ckpt.meta.state.epochs_done, cfg.epochs);
    trainer.run(console_callbacks());
    return;
  }
  TrainConfig base;
  if (!a.config_file.empty()) apply_config_file(a.config_file, base);
  Trainer trainer(resolve(a, base));
  const TrainConfig& cfg = trainer.config();
  std::printf("zotrain train: %s on %s (%lld train / %lld val / %lld test), method %s, %d epochs, "
              "batch %lld, %d thread(s) -> %s\n",
              cfg.model.c_str(), cfg.data.c_str(), static_cast<long long>(trainer.data().train.size()),
              static_cast<long long>(trainer.data().val.size()),
              static_cast<long long>(trainer.data().test.size()), cfg.method.c_str(), cfg.epochs,
              static_cast<long long>(cfg.batch), cfg.threads, cfg.out.c_str());
  trainer.run(console_callbacks());
  std::printf("done: %s/summary.json\n", cfg.out.c_str());
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* sub = app.add_subcommand("train", "train a model");
  sub->add_option("--config", args->config_file, "TOML file of config keys; flags override it");
  sub->add_option("--resume", args->resume_dir,
                  "continue the run in this folder from its checkpoint.bin (--epochs may grow)");
  visit_config(args->flags, [&](const char* key, auto& field, const char* help) {
    args->options[key] = sub->add_option(flag_of(key), field, help)->capture_default_str();
  });
  sub->callback([args] { run_train(*args); });
}

}  // namespace zotrain::tools
