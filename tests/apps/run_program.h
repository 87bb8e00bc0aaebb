// Runs a program of the build (the `sluice` command, an example) as a user would, for tests that
// check what it prints and how it exits.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>

namespace sluice::testing {

struct ProgramRun {
  int exit_code = -1;     // -1 when it did not exit normally.
  std::string output;     // stdout and stderr.
  std::string last_line;  // The last non-empty line.
};

// Runs `program` with `args` (shell words, quoted by the caller) in `cwd`.
inline ProgramRun run_program(const std::filesystem::path& program, const std::string& args,
                              const std::filesystem::path& cwd) {
  const std::string command =
      "cd '" + cwd.string() + "' && '" + program.string() + "' " + args + " 2>&1";
  ProgramRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.output.append(buffer, got);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::istringstream lines(run.output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \r") != std::string::npos) run.last_line = line;
  }
  return run;
}

// The value of `key` in a `key=value ...` line, "" when absent.
inline std::string field(const std::string& line, const std::string& key) {
  std::istringstream words(line);
  for (std::string word; words >> word;) {
    if (word.rfind(key + "=", 0) == 0) return word.substr(key.size() + 1);
  }
  return "";
}

}  // namespace sluice::testing
