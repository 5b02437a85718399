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
  Checkpoint ckpt = read_checkpoint(a.checkpoint);
  const CheckpointMeta& m = ckpt.meta;
  std::string data_name = a.data.empty() ? m.config.data : a.data;
  RunData data = RunData::load(data_name, {0, 0, m.config.seed}, m.config.points);
  data.set_normalization(m.norm);
  if (data.item_shape() != m.item_shape)
    throw InputError(data_name + ": inputs are " + data.item_shape().str() + " but " +
                     a.checkpoint + " was trained on " + m.item_shape.str());
  if (data.num_classes() > m.num_classes)
    throw InputError(data_name + ": has " + std::to_string(data.num_classes()) + " classes but " +
                     a.checkpoint + " has " + std::to_string(m.num_classes));
  if (a.batch < 1) throw InputError("--batch: expected an integer >= 1");
  if (a.threads < 1 || a.threads > 256)
    throw InputError("--threads: expected an integer in [1, 256]");
  const double acc = evaluate_checkpoint(ckpt, data, a.batch, a.threads);
  std::printf("%s on %s test set (%lld examples): accuracy %.2f%%\n", a.checkpoint.c_str(),
              data_name.c_str(), static_cast<long long>(data.size(Split::kTest)), 100 * acc);
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
