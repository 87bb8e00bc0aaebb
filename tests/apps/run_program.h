// Runs a program the way a user does from a shell, capturing what it prints: for the tests of
// the `sluice` command and of the example programs.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace sluice::testing {

struct ProgramRun {
  int exit_code = -1;     // -1 when the program did not exit normally.
  std::string out;        // stdout (a pipe, as when the user pipes it).
  std::string err;        // stderr.
  std::string output;     // out then err.
  std::string last_line;  // The last non-empty line of stdout.
};

// Runs `program` with `args` (shell words, quoted by the caller) in `cwd`.
inline ProgramRun run_program(const std::filesystem::path& program, const std::string& args,
                              const std::filesystem::path& cwd) {
  ProgramRun run;
  std::string err_path = (std::filesystem::temp_directory_path() / "sluice_stderr_XXXXXX").string();
  const int err_fd = ::mkstemp(err_path.data());
  if (err_fd < 0) return run;
  ::close(err_fd);
  const std::string command =
      "cd '" + cwd.string() + "' && '" + program.string() + "' " + args + " 2>'" + err_path + "'";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe != nullptr) {
    char buffer[4096];
    size_t got;
    while ((got = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.out.append(buffer, got);
    const int status = ::pclose(pipe);
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::ifstream err(err_path, std::ios::binary);
  run.err.assign(std::istreambuf_iterator<char>(err), {});
  std::filesystem::remove(err_path);
  run.output = run.out + run.err;
  std::istringstream lines(run.out);
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
