#include <cstdio>
#include <memory>

#include "commands.h"
#include "zotrain/core/error.h"
#include "zotrain/train/trainer.h"

namespace zotrain::tools {

namespace {

struct EvalArgs {
  std::string checkpoint, data;
  int64_t batch = 256;
  int threads = 1;
};

void run_eval(const EvalArgs& a) {
  const Checkpoint ckpt = read_checkpoint(a.checkpoint);
  int64_t examples = 0;
  const double acc = evaluate_checkpoint(ckpt, a.data, a.batch, a.threads, &examples);
  std::printf("%s on %s test set (%lld examples): accuracy %.2f%%\n", a.checkpoint.c_str(),
              (a.data.empty() ? ckpt.meta.config.data : a.data).c_str(),
              static_cast<long long>(examples), 100 * acc);
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* sub = app.add_subcommand("eval", "evaluate a checkpoint on a data set's test split");
  sub->add_option("--checkpoint", args->checkpoint, "checkpoint.bin written by zotrain train")
      ->required();
  sub->add_option("--data", args->data, "data set name or folder (default: the one trained on)");
  sub->add_option("--batch", args->batch, "evaluation batch size")->capture_default_str();
  sub->add_option("--threads", args->threads, "worker threads")->capture_default_str();
  sub->callback([args] { run_eval(*args); });
}

}  // namespace zotrain::tools
