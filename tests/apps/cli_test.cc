// The `sluice` command as users meet it, run as a process: --version, help, the suggestion for a
// mistyped command, exit statuses (0 ok, 1 error, 2 usage) and errors as JSON under --json. Also
// the helpers behind it: the edit distance and the temporary model_dir.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "apps/command_line.h"
#include "apps/temporary_model_dir.h"
#include "core/errors.h"
#include "tests/apps/run_program.h"
#include "tests/formats/testing.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

testing::ProgramRun sluice(const std::string& args,
                           const fs::path& cwd = fs::temp_directory_path()) {
  return testing::run_program(SLUICE_CLI, args, cwd);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// --- The command line ------------------------------------------------------------------------

TEST(CliTest, VersionPrintsTheProjectVersion) {
  const auto run = sluice("--version");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.out, std::string("sluice ") + SLUICE_VERSION + "\n");
}

TEST(CliTest, HelpCommandPrintsWhatHelpFlagsPrint) {
  const auto top = sluice("help");
  EXPECT_EQ(top.exit_code, 0) << top.output;
  EXPECT_EQ(top.out, sluice("--help").out);
  // The exit statuses are documented.
  EXPECT_NE(top.out.find("Exit status:"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("2  usage error"), std::string::npos) << top.out;
  for (const char* command : {"train", "predict", "records count"}) {
    const auto help = sluice(std::string("help ") + command);
    EXPECT_EQ(help.exit_code, 0) << help.output;
    EXPECT_EQ(help.out, sluice(std::string(command) + " --help").out) << command;
    EXPECT_NE(help.out.find(std::string("Usage: sluice ") + command), std::string::npos)
        << help.out;
  }
}

TEST(CliTest, UnknownCommandSuggestsTheNearestAndExitsTwo) {
  const auto typo = sluice("trian --epochs 1");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_EQ(lines_of(typo.err).at(0), "sluice: unknown command 'trian'; did you mean 'train'?");
  EXPECT_EQ(typo.out, "");
  const auto nested = sluice("records cuont x.tfrecord");
  EXPECT_EQ(nested.exit_code, 2);
  EXPECT_EQ(lines_of(nested.err).at(0),
            "sluice: unknown command 'records cuont'; did you mean 'records count'?");
  // Nothing near: the commands are listed.
  const auto far = sluice("xyzzy");
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_NE(far.err.find("unknown command 'xyzzy'; the commands are bench, records"),
            std::string::npos)
      << far.err;
  const auto help = sluice("help evalute");
  EXPECT_EQ(help.exit_code, 2);
  EXPECT_NE(help.err.find("did you mean 'evaluate'?"), std::string::npos) << help.err;
}

// CLI11 exits with its own codes (104, 105, 106, 109, ...) unless they are mapped.
TEST(CliTest, EveryUsageErrorExitsTwoWithCli11sMessage) {
  const std::map<std::string, std::string> cases = {
      {"", "A subcommand is required"},
      {"train --epochs many", "--epochs"},
      {"train --no-such-flag", "--no-such-flag"},
      {"evaluate", "--model-dir is required"},
      {"archive extract only-one-argument", "dir is required"},
  };
  for (const auto& [args, message] : cases) {
    const auto run = sluice(args);
    EXPECT_EQ(run.exit_code, 2) << args << ": " << run.output;
    EXPECT_NE(run.err.find(message), std::string::npos) << args << ": " << run.err;
    EXPECT_EQ(run.out, "") << args;
  }
}

TEST(CliTest, ARuntimeErrorExitsOneNamingItsCode) {
  const auto run = sluice("evaluate --model-dir no-such-model-dir");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("sluice: NotFound error: no sluice_model.json in --model-dir "
                         "no-such-model-dir"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.out, "");
}

TEST(CliTest, UnderJsonAnErrorIsAlsoOneJsonObjectOnStdout) {
  // A quote, a backslash and a tab in the message must come out escaped.
  const auto run = sluice("evaluate --model-dir 'no\"such\\dir\tx' --json");
  EXPECT_EQ(run.exit_code, 1);
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json.at("error"), "NotFound");
  EXPECT_NE(json.at("message").get<std::string>().find("--model-dir no\"such\\dir\tx"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(lines_of(run.out).size(), 1u) << run.out;
  EXPECT_NE(run.err.find("sluice: NotFound error:"), std::string::npos) << run.err;  // As ever.
  // A usage error, under a nested command.
  const auto usage = sluice("records count --json --compression");
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_EQ(nlohmann::json::parse(usage.out).at("error"), "InvalidArgument") << usage.out;
  // Without --json (or with --json=false), stdout stays empty.
  EXPECT_EQ(sluice("evaluate --model-dir nowhere --json=false").out, "");
}

TEST(EditDistanceTest, CountsEditsAndAdjacentTranspositions) {
  EXPECT_EQ(app::edit_distance("train", "train"), 0u);
  EXPECT_EQ(app::edit_distance("trian", "train"), 1u);  // One transposition.
  EXPECT_EQ(app::edit_distance("evalute", "evaluate"), 1u);
  EXPECT_EQ(app::edit_distance("", "bench"), 5u);
  EXPECT_EQ(app::edit_distance("kitten", "sitting"), 3u);
  const std::vector<std::string> commands = {"bench",    "records", "archive", "train",
                                             "evaluate", "predict", "help"};
  EXPECT_EQ(app::nearest_word("trian", commands), "train");
  EXPECT_EQ(app::nearest_word("predcit", commands), "predict");
  EXPECT_EQ(app::nearest_word("trn", commands), "");  // Half the word would change.
  EXPECT_EQ(app::nearest_word("xyzzy", commands), "");
}

// --- The temporary model_dir -----------------------------------------------------------------

TEST(TemporaryModelDirTest, IsANewDirectoryRemovedWithItsContentsUnlessKept) {
  std::string removed, kept;
  {
    app::TemporaryModelDir a, b;
    EXPECT_NE(a.path(), b.path());
    for (const auto* dir : {&a, &b}) {
      EXPECT_TRUE(fs::is_directory(dir->path()));
      EXPECT_TRUE(fs::equivalent(fs::path(dir->path()).parent_path(), fs::temp_directory_path()));
      EXPECT_EQ(fs::path(dir->path()).filename().string().rfind("sluice-model-", 0), 0u);
      EXPECT_TRUE(fs::is_empty(dir->path()));
    }
    fs::create_directories(fs::path(a.path()) / "eval");
    testing::write_file((fs::path(a.path()) / "eval" / "events").string(), "x");
    testing::write_file((fs::path(b.path()) / "checkpoint").string(), "x");
    b.keep();
    EXPECT_TRUE(b.kept());
    removed = a.path(), kept = b.path();
  }
  EXPECT_FALSE(fs::exists(removed));
  EXPECT_TRUE(fs::exists(fs::path(kept) / "checkpoint"));
  fs::remove_all(kept);
}

TEST(TemporaryModelDirTest, IsRemovedWhenAnErrorUnwindsTheRun) {
  std::string path;
  EXPECT_THROW(
      {
        app::TemporaryModelDir dir;
        path = dir.path();
        testing::write_file((fs::path(path) / "model.ckpt-1").string(), "x");
        throw InvalidArgument("the run failed");
      },
      InvalidArgument);
  EXPECT_FALSE(path.empty());
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace sluice
