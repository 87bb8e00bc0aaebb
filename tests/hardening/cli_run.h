// Runs the `sluice` command for the bad-input tests, optionally under a limit on its address space
// (`ulimit -v`), so a test can show that hostile input ends in a sluice error while memory stays
// within a budget instead of ending in std::bad_alloc.
#pragma once

#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace sluice::testing {

struct CliRun {
  int exit_code = -1;  // -1 when it did not exit normally (killed by a signal).
  std::string output;  // stdout and stderr together.
};

// Sanitizers reserve terabytes of address space for their shadow memory, so under them the limit
// cannot be applied; the command still runs and its error is still checked.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kCanLimitAddressSpace = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
inline constexpr bool kCanLimitAddressSpace = false;
#else
inline constexpr bool kCanLimitAddressSpace = true;
#endif
#else
inline constexpr bool kCanLimitAddressSpace = true;
#endif

// Runs `SLUICE_CLI args` through the shell (args are shell words: quote paths with
// single quotes) with its address space limited to `address_space_mib` when that is positive
// and kCanLimitAddressSpace.
inline CliRun run_sluice(const std::string& args, int64_t address_space_mib = 0) {
  std::string command;
  if (address_space_mib > 0 && kCanLimitAddressSpace) {
    command = "ulimit -v " + std::to_string(address_space_mib * 1024) + " && ";
  }
  command += "exec '" SLUICE_CLI "' " + args + " 2>&1";
  CliRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) run.output.append(buffer, n);
  const int status = ::pclose(pipe);
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  return run;
}

// A path as one single-quoted shell word.
inline std::string shell_quote(const std::string& path) {
  std::string out = "'";
  for (char c : path) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace sluice::testing
