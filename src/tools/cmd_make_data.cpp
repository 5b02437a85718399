#include <cstdio>
#include <memory>

#include "commands.h"
#include "data/modelnet_standin.h"
#include "zotrain/core/error.h"

namespace zotrain::tools {

namespace {

struct MakeDataArgs {
  std::string name, out;
  StandinOptions standin;
};

void run_make_data(const MakeDataArgs& a) {
  if (a.name != "modelnet40-standin")
    throw InputError("make-data: unknown generated data set '" + a.name +
                     "'; expected modelnet40-standin");
  const std::string out = a.out.empty() ? "data/" + a.name : a.out;
  write_modelnet40_standin(out, a.standin);
  const StandinOptions& s = a.standin;
  std::printf("%s: wrote %s (%zu classes, %lld training and %lld test clouds of %lld points)\n",
              a.name.c_str(), out.c_str(), standin_class_names().size(),
              static_cast<long long>(s.train_per_class * standin_class_names().size()),
              static_cast<long long>(s.test_per_class * standin_class_names().size()),
              static_cast<long long>(s.points));
}

}  // namespace

void add_make_data_command(CLI::App& app) {
  auto args = std::make_shared<MakeDataArgs>();
  CLI::App* sub = app.add_subcommand(
      "make-data", "generate a stand-in data set (modelnet40-standin: see docs/data.md)");
  sub->add_option("name", args->name, "the data set to generate: modelnet40-standin")->required();
  sub->add_option("--out", args->out, "folder to write (default: data/NAME)");
  StandinOptions& s = args->standin;
  sub->add_option("--train-per-class", s.train_per_class, "training clouds per class")
      ->capture_default_str();
  sub->add_option("--test-per-class", s.test_per_class, "test clouds per class")
      ->capture_default_str();
  sub->add_option("--points", s.points, "points per cloud")->capture_default_str();
  sub->add_option("--seed", s.seed, "generator seed")->capture_default_str();
  sub->callback([args] { run_make_data(*args); });
}

}  // namespace zotrain::tools
