// How the `sluice` binary runs its command line the way users expect of a command-line tool:
// `--version`, `help [COMMAND...]`, a suggestion for a mistyped command, documented exit codes,
// and errors as one JSON object as well under `--json`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::app {

// Exit statuses of every sluice command (listed in `sluice --help`).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  // A sluice error or any other failure at run time.
inline constexpr int kExitUsage = 2;  // The command line itself is wrong.

// Adds `--version` (printing "sluice <version>"), the `help [COMMAND...]` subcommand (printing
// what `sluice COMMAND... --help` prints) and the exit-status footer to `app`, the top-level
// command. Call after every subcommand has been added.
void add_standard_commands(CLI::App& app, const std::string& version);

// Parses argv and runs the chosen command's callback; returns the exit status. Help and the
// version exit 0 on stdout. A usage error (any CLI11 parse error, an unknown command with the
// nearest known one suggested) prints "sluice: <message>" on stderr and returns kExitUsage. A
// sluice::Error or any other exception prints "sluice: <Code> error: <message>" on stderr and
// returns kExitError. When the chosen (sub)command has a `--json` flag that is set, an error is
// also printed on stdout as one JSON object {"error": "<Code>", "message": "<message>"}, usage
// errors with code "InvalidArgument".
int run_command_line(CLI::App& app, int argc, char** argv);

// The optimal string alignment distance (Levenshtein's edits plus transposing two adjacent
// characters, each counting 1): "trian" is 1 from "train".
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word` by edit_distance (the first of equals) when it is close enough
// to be a plausible typo of it, else "".
std::string nearest_word(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace sluice::app
