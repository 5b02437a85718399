// zotrain bench: times training steps of a configuration on generated data of the model's
// input shape, after a warm-up, and prints milliseconds per step and forward passes per second.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "config_options.h"
#include "train/step_bench.h"
#include "zotrain/core/error.h"

namespace zotrain::tools {

namespace {

struct BenchArgs {
  ConfigOptions config;
  InputOptions input;
  int steps = 20;
  int warmup = 3;
  bool json = false;
};

void run_bench(const BenchArgs& a) {
  if (a.steps < 1 || a.warmup < 0) throw InputError("--steps must be >= 1 and --warmup >= 0");
  StepBench bench(a.config.resolve(), a.input.item_shape(), a.input.classes);
  const Trainer& trainer = bench.trainer();
  const TrainConfig& cfg = trainer.config();
  for (int i = 0; i < a.warmup; ++i) bench.step();
  const int64_t passes0 = trainer.state().forward_passes;
  std::vector<double> ms;
  for (int i = 0; i < a.steps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    bench.step();
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  double total = 0;
  for (double m : ms) total += m;
  const double passes_per_s = (trainer.state().forward_passes - passes0) / (total / 1000.0);
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  if (a.json) {
    nlohmann::json out = {{"model", cfg.model},
                          {"method", name_of(cfg.method)},
                          {"bp_layers", trainer.bp_layers()},
                          {"batch", cfg.batch},
                          {"threads", cfg.threads},
                          {"precision", name_of(cfg.precision)},
                          {"q", cfg.q},
                          {"steps", a.steps},
                          {"ms_median", median},
                          {"ms_min", sorted.front()},
                          {"ms_max", sorted.back()},
                          {"forward_passes_per_s", passes_per_s},
                          {"examples_per_s", passes_per_s * cfg.batch}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("%s, method %s (%d BP layers), batch %lld, %d thread(s): %d steps after %d warm-up\n",
              cfg.model.c_str(), name_of(cfg.method), trainer.bp_layers(),
              static_cast<long long>(cfg.batch), cfg.threads, a.steps, a.warmup);
  std::printf(
      "ms/step: median %.3f  min %.3f  max %.3f;  %.1f forward passes/s (%.0f examples/s)\n",
      median, sorted.front(), sorted.back(), passes_per_s, passes_per_s * cfg.batch);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* sub = app.add_subcommand("bench", "time training steps on generated data");
  add_config_options(sub, args->config);
  add_input_options(sub, args->input);
  sub->add_option("--steps", args->steps, "timed steps")->capture_default_str();
  sub->add_option("--warmup", args->warmup, "untimed steps first")->capture_default_str();
  sub->add_flag("--json", args->json, "print the result as JSON");
  sub->callback([args] { run_bench(*args); });
}

}  // namespace zotrain::tools
