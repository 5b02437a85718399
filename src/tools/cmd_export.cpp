#include <cstdio>
#include <memory>

#include "commands.h"
#include "zotrain/train/export.h"

namespace zotrain::tools {

namespace {

struct ExportArgs {
  std::string checkpoint, out;
};

void run_export(const ExportArgs& a) {
  std::printf("%s\n", export_onnx(read_checkpoint(a.checkpoint), a.out).c_str());
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* sub = app.add_subcommand("export", "write a checkpoint's model as an ONNX file");
  sub->add_option("--checkpoint", args->checkpoint, "checkpoint.bin written by zotrain train")
      ->required();
  sub->add_option("--out", args->out, "the .onnx file to write")->required();
  sub->callback([args] { run_export(*args); });
}

}  // namespace zotrain::tools
