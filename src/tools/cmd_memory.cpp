// zotrain memory: the per-layer memory plan of a training configuration, and how it compares
// with Full ZO and Full BP of the same model and batch.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

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
  TrainConfig cfg = a.config.resolve();
  validate(cfg);
  const Shape item = a.input.item_shape();
  ModelSpec spec = model_by_name(cfg.model, item, a.input.classes);
  Network net(spec.item_shape, spec.layers);
  const int head = choose_head(net, cfg);
  MemoryPlan plan = training_plan(net, cfg, head);
  TrainConfig zo = cfg, bp = cfg;
  zo.method = Method::kZo, bp.method = Method::kBp;
  zo.memory_budget = bp.memory_budget = 0;
  // int8-npu runs ZO only: its Full BP yardstick is the f32 one.
  if (bp.precision == Precision::kInt8Npu) bp.precision = Precision::kF32;
  const char* bp_label = bp.precision == cfg.precision ? "Full BP" : "Full BP (f32)";
  // With frozen layers (--train-layers), Full BP's head starts after them.
  const size_t full_zo = training_plan(net, zo, choose_head(net, zo)).total();
  const size_t full_bp = training_plan(net, bp, choose_head(net, bp)).total();
  // The f32 forward pass, the yardstick of "training memory = inference memory".
  const size_t inference = net.inference_plan(cfg.batch, cfg.threads).total();
  const double over_inference = 100.0 * (static_cast<double>(plan.total()) / inference - 1.0);
  int bp_layers = 0;
  for (int i : net.param_layers()) bp_layers += i >= head;
  const double over_zo = 100.0 * (static_cast<double>(plan.total()) / full_zo - 1.0);
  const double vs_bp = 100.0 * (1.0 - static_cast<double>(plan.total()) / full_bp);

  if (a.json) {
    nlohmann::json rows = nlohmann::json::array(), buckets = nlohmann::json::object();
    for (const MemoryRow& r : plan.rows)
      rows.push_back({{"layer", r.layer},
                      {"buffer", r.what},
                      {"bucket", bucket_name(r.bucket)},
                      {"bytes", r.bytes}});
    for (int b = 0; b < static_cast<int>(Bucket::kCount); ++b)
      buckets[bucket_name(static_cast<Bucket>(b))] = plan.bytes(static_cast<Bucket>(b));
    nlohmann::json out = {{"model", cfg.model},
                          {"batch", cfg.batch},
                          {"method", name_of(cfg.method)},
                          {"precision", name_of(cfg.precision)},
                          {"bp_layers", bp_layers},
                          {"head_start", head},
                          {"rows", rows},
                          {"buckets", buckets},
                          {"total_bytes", plan.total()},
                          {"full_zo_bytes", full_zo},
                          {"full_bp_bytes", full_bp},
                          {"full_bp_precision", name_of(bp.precision)},
                          {"inference_f32_bytes", inference},
                          {"percent_over_inference_f32", over_inference},
                          {"percent_over_full_zo", over_zo},
                          {"percent_saved_vs_full_bp", vs_bp}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf(
      "%s, batch %lld, method %s, precision %s, %d BP layer(s) of %zu (head starts at layer %d)\n",
      cfg.model.c_str(), static_cast<long long>(cfg.batch), name_of(cfg.method),
      name_of(cfg.precision), bp_layers, net.param_layers().size(), head);
  std::printf("%6s  %-44s %-12s %12s\n", "layer", "buffer", "bucket", "bytes");
  for (const MemoryRow& r : plan.rows)
    std::printf("%6s  %-44s %-12s %12zu\n", r.layer < 0 ? "-" : std::to_string(r.layer).c_str(),
                r.what.c_str(), bucket_name(r.bucket), r.bytes);
  std::printf("\nby bucket:\n");
  for (int b = 0; b < static_cast<int>(Bucket::kCount); ++b)
    if (size_t n = plan.bytes(static_cast<Bucket>(b)))
      std::printf("  %-12s %12zu  (%5.1f%%)\n", bucket_name(static_cast<Bucket>(b)), n,
                  100.0 * n / plan.total());
  std::printf("total          %12zu bytes\n", plan.total());
  std::printf("Full ZO        %12zu bytes; this is %+.3f%% over it\n", full_zo, over_zo);
  std::printf("Inference (f32) %11zu bytes; this is %+.3f%% over it\n", inference, over_inference);
  std::printf("%-14s %12zu bytes; this saves %.1f%% of it\n", bp_label, full_bp, vs_bp);
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
