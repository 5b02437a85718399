#include <cstdio>
#include <memory>

#include "commands.h"
#include "config_options.h"
#include "progress.h"
#include "zotrain/core/error.h"
#include "zotrain/train/trainer.h"

namespace zotrain::tools {

namespace {

struct TrainArgs {
  std::string resume_dir;
  ConfigOptions config;
};

void run_train(const TrainArgs& a) {
  if (!a.resume_dir.empty()) {
    if (!a.config.config_file.empty())
      throw InputError("--config cannot be combined with --resume");
    // Only the length of the run, the thread count and the output folder may change on resume;
    // anything else would not be a continuation of the same run.
    for (const auto& [key, opt] : a.config.options)
      if (opt->count() && key != "epochs" && key != "threads" && key != "out")
        throw InputError(flag_of(key) + " cannot be changed when resuming (--resume " +
                         a.resume_dir + " continues that run's config)");
    Checkpoint ckpt = read_checkpoint(a.resume_dir + "/checkpoint.bin");
    TrainConfig cfg = a.config.resolve(ckpt.meta.config);
    if (!a.config.given("out")) cfg.out = a.resume_dir;
    Trainer trainer(cfg);
    trainer.resume(ckpt);
    std::printf("resuming %s after epoch %d of %d\n", a.resume_dir.c_str(),
                ckpt.meta.state.epochs_done, cfg.epochs);
    trainer.run(console_callbacks());
    return;
  }
  const TrainConfig requested = a.config.resolve();
  Trainer trainer(requested);
  const TrainConfig& cfg = trainer.config();
  std::printf("zotrain train: %s on %s (%lld train / %lld val / %lld test), method %s",
              cfg.model.c_str(), cfg.data.c_str(),
              static_cast<long long>(trainer.data().size(Split::kTrain)),
              static_cast<long long>(trainer.data().size(Split::kVal)),
              static_cast<long long>(trainer.data().size(Split::kTest)), name_of(cfg.method));
  if (cfg.method == Method::kElastic)
    std::printf(" with %d BP layer(s)%s", trainer.bp_layers(),
                cfg.memory_budget ? " (the most that fit --memory-budget)" : "");
  // The defaults the run started from, those of its method and precision (then the config file
  // and the flags).
  const std::string note = defaults_note(cfg);
  std::printf(", precision %s (defaults of %s %s%s%s)", name_of(cfg.precision), name_of(cfg.method),
              name_of(cfg.precision), note.empty() ? "" : ": ", note.c_str());
  std::printf(", %d epochs, batch %lld, %d thread(s)%s, %zu bytes planned -> %s\n", cfg.epochs,
              static_cast<long long>(cfg.batch), cfg.threads,
              cfg.threads < requested.threads ? " (--threads capped at 4 per core)" : "",
              trainer.plan().total(), cfg.out.c_str());
  trainer.run(console_callbacks());
  std::printf("done: %s/summary.json\n", cfg.out.c_str());
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* sub = app.add_subcommand("train", "train a model");
  sub->add_option("--resume", args->resume_dir,
                  "continue the run in this folder from its checkpoint.bin (--epochs may grow)");
  add_config_options(sub, args->config);
  // The values shown are the base; each (method, precision) starts from its own best settings.
  sub->footer(
      "Each --method and --precision starts from the best settings found for it (e.g. elastic: "
      "zo_layer_scale cyclic, zo_lr 1.5e-3; bp: lr 0.01); the run's first line names them, and "
      "a config key or flag overrides them (docs/reproduction.md, \"Defaults per method and "
      "precision\").");
  sub->callback([args] { run_train(*args); });
}

}  // namespace zotrain::tools
