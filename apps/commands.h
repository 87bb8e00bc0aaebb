// The subcommands of the `sluice` binary; each adds itself to the command line parser.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::app {

void add_bench_command(CLI::App& app);
void add_records_command(CLI::App& app);
void add_archive_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_evaluate_command(CLI::App& app);
void add_predict_command(CLI::App& app);

}  // namespace sluice::app
