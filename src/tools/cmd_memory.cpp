// zotrain memory: the per-layer memory plan of a training configuration, and how it compares
// with Full ZO and Full BP of the same model and batch.
#include <cstdio>
#include <memory>

#include "commands.h"
#include "config_options.h"
#include "zotrain/core/error.h"
#include "zotrain/models/model.h"
#include "zotrain/train/trainer.h"

namespace zotrain::tools {

namespace {

struct MemoryArgs {
  ConfigOptions config;
  InputOptions input;
  bool json = false;
};

void run_memory(const MemoryArgs& a) {
  const MemoryReport r = memory_report(a.config.resolve(), a.input.item_shape(), a.input.classes);
  if (a.json) {
    std::printf("%s\n", memory_report_json(r).c_str());
    return;
  }
  const TrainConfig& cfg = r.cfg;
  const MemoryPlan& plan = r.plan;
  const auto over = [&](size_t base) {
    return 100.0 * (static_cast<double>(plan.total()) / base - 1.0);
  };
  std::printf(
      "%s, batch %lld, method %s, precision %s, %d BP layer(s) of %d (head starts at layer %d)\n",
      cfg.model.c_str(), static_cast<long long>(cfg.batch), name_of(cfg.method),
      name_of(cfg.precision), r.bp_layers, r.param_layers, r.head);
  std::printf("%6s  %-44s %-12s %12s\n", "layer", "buffer", "bucket", "bytes");
  for (const MemoryRow& row : plan.rows)
    std::printf("%6s  %-44s %-12s %12zu\n", row.layer < 0 ? "-" : std::to_string(row.layer).c_str(),
                row.what.c_str(), bucket_name(row.bucket), row.bytes);
  std::printf("\nby bucket:\n");
  for (int b = 0; b < static_cast<int>(Bucket::kCount); ++b)
    if (size_t n = plan.bytes(static_cast<Bucket>(b)))
      std::printf("  %-12s %12zu  (%5.1f%%)\n", bucket_name(static_cast<Bucket>(b)), n,
                  100.0 * n / plan.total());
  std::printf("total          %12zu bytes\n", plan.total());
  std::printf("Full ZO        %12zu bytes; this is %+.3f%% over it\n", r.full_zo, over(r.full_zo));
  std::printf("Inference (f32) %11zu bytes; this is %+.3f%% over it\n", r.inference,
              over(r.inference));
  std::printf("%-14s %12zu bytes; this saves %.1f%% of it\n",
              r.full_bp_precision == cfg.precision ? "Full BP" : "Full BP (f32)", r.full_bp,
              -over(r.full_bp));
}

}  // namespace

void add_memory_command(CLI::App& app) {
  auto args = std::make_shared<MemoryArgs>();
  CLI::App* sub = app.add_subcommand("memory", "print the memory plan of a training configuration");
  add_config_options(sub, args->config);
  add_input_options(sub, args->input);
  sub->add_flag("--json", args->json, "print the plan as JSON");
  sub->callback([args] { run_memory(*args); });
}

}  // namespace zotrain::tools
