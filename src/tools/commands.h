// The zotrain subcommands; each adds itself to the app and runs from its CLI11 callback.
// Exceptions leave through main(): InputError means exit code 2, anything else 1.
#pragma once

#include <CLI/CLI.hpp>

namespace zotrain::tools {

void add_train_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_memory_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_make_data_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_device_command(CLI::App& app);

}  // namespace zotrain::tools
