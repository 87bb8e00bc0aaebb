// The `sluice` command as users meet it, run as a process: --version, help, the suggestion for a
// mistyped command, exit statuses (0 ok, 1 error, 2 usage), errors as JSON under --json, and
// predict's grid sample and CSV on a tiny model trained once for the suite. Also the helpers
// behind them: the edit distance, the class-balanced sample, the temporary model_dir, the CSV
// fields and the confidence read from a model's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "apps/class_balanced_sample.h"
#include "apps/command_line.h"
#include "apps/prediction_confidence.h"
#include "apps/prediction_csv.h"
#include "apps/temporary_model_dir.h"
#include "sluice/core/errors.h"
#include "sluice/estimator/estimator.h"
#include "sluice/formats/png.h"
#include "sluice/formats/tfrecord_writer.h"
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

// --- bench --trace ---------------------------------------------------------------------------

class BenchTraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sluice_bench_trace_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The "X" spans of a trace file, after checking what every viewer needs of the document.
  static std::vector<nlohmann::json> spans_of(const fs::path& file) {
    std::ifstream in(file);
    const nlohmann::json trace = nlohmann::json::parse(in);
    EXPECT_EQ(trace.at("displayTimeUnit"), "ms");
    std::set<int64_t> named, used;
    std::vector<nlohmann::json> spans;
    for (const nlohmann::json& e : trace.at("traceEvents")) {
      if (e.at("ph") == "M" && e.at("name") == "thread_name") named.insert(int64_t(e.at("tid")));
      if (e.at("ph") != "X") continue;
      EXPECT_GE(double(e.at("dur")), 0.0) << e;
      used.insert(int64_t(e.at("tid")));
      spans.push_back(e);
    }
    EXPECT_EQ(named, used);
    return spans;
  }

  fs::path dir_;
};

TEST_F(BenchTraceTest, OverheadWritesTheTraceOfItsPipeline) {
  const auto run =
      sluice("bench overhead --elements 20000 --threads 2 --trace trace.json --json", dir_);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.out.find("trace: trace.json, "), std::string::npos) << run.out;
  const nlohmann::json last = nlohmann::json::parse(run.last_line);
  EXPECT_EQ(last.at("elements"), 20000);
  EXPECT_EQ(last.at("trace_dropped"), 0);
  const std::vector<nlohmann::json> spans = spans_of(dir_ / "trace.json");
  EXPECT_EQ(int64_t(last.at("trace_events")), int64_t(spans.size()));
  // Every stage, with the elements it handled: the workers mapped each one once.
  std::map<std::string, int64_t> items;
  for (const nlohmann::json& e : spans) {
    if (e.at("cat") != "wait")
      items[std::string(e.at("cat")) + "/" + std::string(e.at("name"))] +=
          int64_t(e.at("args").at("items"));
  }
  // The map and the batch run fused as one stage.
  EXPECT_EQ(items["stage/range"], 20000);
  EXPECT_EQ(items["work/map_and_batch"], 20000);
  EXPECT_EQ(items["take/map_and_batch"], 20);  // 20000 / 1024, rounded up.

  // Without --trace nothing is traced or written.
  const auto untraced = sluice("bench overhead --elements 20000 --threads 2 --json", dir_);
  ASSERT_EQ(untraced.exit_code, 0) << untraced.output;
  EXPECT_EQ(untraced.out.find("trace:"), std::string::npos) << untraced.out;
  EXPECT_FALSE(nlohmann::json::parse(untraced.last_line).contains("trace_events"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(BenchTraceTest, TFRecordTracesAPassThroughTFRecordDataset) {
  {
    TFRecordWriter writer((dir_ / "data.tfrecord").string());
    for (int i = 0; i < 300; ++i) writer.write("record " + std::to_string(i));
    writer.close();
  }
  const auto run =
      sluice("bench tfrecord data.tfrecord --rounds 1 --trace trace.json --json", dir_);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json last = nlohmann::json::parse(run.last_line);
  EXPECT_EQ(last.at("records"), 300);
  const std::vector<nlohmann::json> spans = spans_of(dir_ / "trace.json");
  EXPECT_EQ(int64_t(last.at("trace_events")), int64_t(spans.size()));
  int64_t read = 0;  // By the stage the consumer pulls from.
  for (const nlohmann::json& e : spans) {
    if (e.at("args").at("depth") == 0) read += int64_t(e.at("args").at("items"));
  }
  EXPECT_EQ(read, 300);
}

TEST_F(BenchTraceTest, AnUnwritableTraceFileIsAnError) {
  const auto run = sluice("bench overhead --elements 1000 --trace no-such-dir/trace.json", dir_);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.err.find("no-such-dir/trace.json"), std::string::npos) << run.err;
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

// --- The grid's sample -----------------------------------------------------------------------

// What ClassBalancedSample must pick, from the whole stream at once.
std::vector<int64_t> expected_picks(const std::vector<int64_t>& classes, int64_t size,
                                    uint64_t seed) {
  std::map<int64_t, std::vector<std::pair<uint64_t, int64_t>>> by_class;
  for (size_t i = 0; i < classes.size(); ++i) {
    by_class[classes[i]].emplace_back(mix_seed(seed, i), static_cast<int64_t>(i));
  }
  for (auto& [c, items] : by_class) std::sort(items.begin(), items.end());
  std::vector<int64_t> picks;
  for (size_t turn = 0; static_cast<int64_t>(picks.size()) < size; ++turn) {
    bool any = false;
    for (const auto& [c, items] : by_class) {
      if (turn < items.size() && static_cast<int64_t>(picks.size()) < size) {
        picks.push_back(items[turn].second);
        any = true;
      }
    }
    if (!any) break;
  }
  return picks;
}

std::vector<int64_t> sampled(const std::vector<int64_t>& classes, int64_t size, uint64_t seed,
                             int64_t* max_held = nullptr) {
  app::ClassBalancedSample<int64_t> sample(size, seed);
  for (size_t i = 0; i < classes.size(); ++i) {
    sample.offer(static_cast<int64_t>(i), classes[i], [&] { return static_cast<int64_t>(i); });
    if (max_held) *max_held = std::max(*max_held, sample.held());
  }
  std::vector<int64_t> picks;
  for (const auto& [index, value] : sample.picks()) {
    EXPECT_EQ(index, value);
    picks.push_back(index);
  }
  return picks;
}

TEST(ClassBalancedSampleTest, TakesEachClassInTurnThenASeededChoiceWithin) {
  // Sorted by class, as a folder lists its files: the first 25 would all be class 0.
  std::vector<int64_t> classes;
  for (int64_t c = 0; c < 10; ++c) classes.insert(classes.end(), 30, c);
  const std::vector<int64_t> picks = sampled(classes, 25, 0);
  ASSERT_EQ(picks.size(), 25u);
  for (size_t i = 0; i < picks.size(); ++i) {
    EXPECT_EQ(classes[static_cast<size_t>(picks[i])], static_cast<int64_t>(i % 10)) << i;
  }
  EXPECT_EQ(picks, expected_picks(classes, 25, 0));
  EXPECT_NE(picks, sampled(classes, 25, 1));  // Another seed, another choice...
  EXPECT_EQ(picks, sampled(classes, 25, 0));  // ...and the same seed, the same.
}

TEST(ClassBalancedSampleTest, MatchesTheWholeStreamChoiceWhileHoldingFew) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 60; ++trial) {
    // Up to 40 classes of skewed sizes: some classes run out and leave their turns to others.
    const int64_t num_classes = 1 + trial % 40;
    std::vector<int64_t> classes(static_cast<size_t>(200 + 40 * trial));
    for (int64_t& c : classes) {
      c = static_cast<int64_t>(random() % static_cast<uint32_t>(num_classes));
      if (random() % 3 == 0) c = std::min<int64_t>(c, 1);
    }
    const int64_t size = 1 + trial % 30;
    int64_t max_held = 0;
    EXPECT_EQ(sampled(classes, size, trial, &max_held), expected_picks(classes, size, trial))
        << "trial " << trial;
    EXPECT_LE(max_held, 4 * size + num_classes + 1) << "trial " << trial;
  }
  EXPECT_TRUE(sampled({}, 25, 0).empty());
  EXPECT_TRUE(sampled({1, 2, 3}, 0, 0).empty());
}

// --- Predictions: CSV and confidence ---------------------------------------------------------

TEST(PredictionCsvTest, QuotesFieldsAsRfc4180) {
  EXPECT_EQ(app::csv_field("Bag"), "Bag");
  EXPECT_EQ(app::csv_field("T-shirt, top"), "\"T-shirt, top\"");
  EXPECT_EQ(app::csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(app::csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(app::csv_field(""), "");

  app::PredictionCsv csv({"Bag", "T-shirt, top"});
  Prediction p;
  p.class_id = 1;
  p.label = 0;
  csv.add(0, p, 0.8754321);
  p.label.reset();
  p.class_id = 5;  // No name: its id.
  csv.add(1, p, 1.0);
  EXPECT_EQ(csv.text(),
            "index,label,label_name,predicted,predicted_name,confidence\n"
            "0,0,Bag,1,\"T-shirt, top\",0.875432\n"
            "1,,,5,5,1.000000\n");
  EXPECT_EQ(csv.rows(), 2);
}

Prediction predicted(std::vector<float> output, int64_t class_id) {
  Prediction p;
  p.output = Tensor::from_vector<float>(output);
  p.class_id = class_id;
  return p;
}

TEST(PredictionConfidenceTest, ReadsTheOutputTheWayItsLossDoes) {
  using app::prediction_confidence;
  EXPECT_NEAR(prediction_confidence(predicted({0.1f, 0.7f, 0.2f}, 1),
                                    Loss("sparse_categorical_crossentropy")),
              0.7, 1e-6);
  EXPECT_NEAR(
      prediction_confidence(predicted({std::log(0.25f), std::log(0.75f)}, 1), Loss("nll_loss")),
      0.75, 1e-6);
  // Logits 0 and log 3: softmax gives 0.75.
  EXPECT_NEAR(prediction_confidence(predicted({0.0f, std::log(3.0f)}, 1),
                                    Loss("sparse_categorical_crossentropy", true)),
              0.75, 1e-6);
  EXPECT_NEAR(prediction_confidence(predicted({1000.0f, 0.0f}, 0),
                                    Loss("sparse_categorical_crossentropy", true)),
              1.0, 1e-6);
  // A sigmoid unit: p of class 1, 1 - p of class 0.
  EXPECT_NEAR(prediction_confidence(predicted({0.9f}, 1), Loss("binary_crossentropy")), 0.9, 1e-6);
  EXPECT_NEAR(prediction_confidence(predicted({0.1f}, 0), Loss("binary_crossentropy")), 0.9, 1e-6);
  EXPECT_NEAR(prediction_confidence(predicted({0.0f}, 0), Loss("binary_crossentropy", true)), 0.5,
              1e-6);
}

// --- predict on a trained model --------------------------------------------------------------

// Ten classes (fashion-cnn's ten outputs) of 28×28 grey PNGs, each class its own brightness, in
// train/ and test/ folders; one class name holds a comma and a quote for the CSV. A model is
// trained on them once for the suite (one epoch: its accuracy does not matter).
class PredictTest : public ::testing::Test {
 protected:
  static constexpr int kTestPerClass = 3;

  static void SetUpTestSuite() {
    dir_ =
        new fs::path(fs::temp_directory_path() / ("sluice_cli_test_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    for (const auto& [split, count] : {std::pair<const char*, int>{"train", 4}, {"test", 3}}) {
      for (size_t c = 0; c < class_names().size(); ++c) {
        const fs::path folder = *dir_ / "data" / split / class_names()[c];
        fs::create_directories(folder);
        for (int i = 0; i < count; ++i) {
          Tensor image(DType::kUInt8, Shape{28, 28, 1});
          uint8_t* p = image.data<uint8_t>();
          for (int k = 0; k < 28 * 28; ++k) p[k] = static_cast<uint8_t>(c * 25 + (k * 7 + i) % 20);
          testing::write_file((folder / (std::to_string(i) + ".png")).string(), encode_png(image));
        }
      }
    }
    const auto train = sluice(
        "train --data data --model fashion-cnn --epochs 1 --batch 8 --model-dir model", *dir_);
    ASSERT_EQ(train.exit_code, 0) << train.output;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }

  // In the sorted order the folder's classes are numbered in.
  static const std::vector<std::string>& class_names() {
    static const std::vector<std::string> names = {"Ankle boot",       "Bag",    "Coat",  "Dress",
                                                   "Pullover",         "Sandal", "Shirt", "Sneaker",
                                                   "T-shirt, \"top\"", "Trouser"};
    return names;
  }

  // The grid's cells as predict prints them: (example index, actual class name).
  static std::vector<std::pair<int64_t, std::string>> cells(const std::string& out) {
    std::vector<std::pair<int64_t, std::string>> cells;
    const std::regex line(R"(^(\d+): example (\d+), actual (.*), predicted (.*) \((\d+)%\)$)");
    for (const std::string& text : lines_of(out)) {
      std::smatch m;
      if (!std::regex_match(text, m, line)) continue;
      EXPECT_EQ(std::stoul(m[1].str()), cells.size()) << text;
      cells.emplace_back(std::stoll(m[2].str()), m[3].str());
    }
    return cells;
  }

  static fs::path* dir_;
};

fs::path* PredictTest::dir_ = nullptr;

TEST_F(PredictTest, GridSamplesAcrossClassesWithASeedAndTitlesWithClassNames) {
  const auto run = sluice("predict --model-dir model --grid grid.png", *dir_);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto picked = cells(run.out);
  ASSERT_EQ(picked.size(), 25u) << run.out;
  // Round-robin over the ten classes by name: the first 25 files would be classes 0 to 8.
  std::set<int64_t> indexes;
  for (size_t i = 0; i < picked.size(); ++i) {
    EXPECT_EQ(picked[i].second, class_names()[i % 10]) << i;
    EXPECT_EQ(picked[i].first / kTestPerClass, static_cast<int64_t>(i % 10)) << i;
    indexes.insert(picked[i].first);
  }
  EXPECT_EQ(indexes.size(), 25u);
  const Tensor grid = decode_png(testing::read_file((*dir_ / "grid.png").string()));
  EXPECT_EQ(grid.shape(), (Shape{5 * (128 + 28), 5 * 128, 3}));

  const auto again = sluice("predict --model-dir model --seed 0", *dir_);
  EXPECT_EQ(cells(again.out), picked);
  const auto other = sluice("predict --model-dir model --seed 3", *dir_);
  ASSERT_EQ(cells(other.out).size(), 25u);
  EXPECT_NE(cells(other.out), picked);
}

TEST_F(PredictTest, OutputWritesEveryPredictionAsCsv) {
  const auto run = sluice("predict --model-dir model --output preds.csv --json", *dir_);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(nlohmann::json::parse(run.last_line).at("images"), 30) << run.last_line;
  const std::vector<std::string> rows =
      lines_of(testing::read_file((*dir_ / "preds.csv").string()));
  ASSERT_EQ(rows.size(), 31u);
  EXPECT_EQ(rows[0], "index,label,label_name,predicted,predicted_name,confidence");
  const std::regex row(R"(^(\d+),(\d+),("(?:[^"]|"")*"|[^,"]*),(\d+),("(?:[^"]|"")*"|[^,"]*),)"
                       R"((0\.\d{6}|1\.000000)$)");
  for (size_t i = 1; i < rows.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(rows[i], m, row)) << rows[i];
    EXPECT_EQ(std::stoul(m[1].str()), i - 1);
    const size_t label = std::stoul(m[2].str());
    EXPECT_EQ(label, (i - 1) / kTestPerClass);  // The test split in order.
    EXPECT_EQ(m[3].str(), app::csv_field(class_names().at(label))) << rows[i];
    EXPECT_EQ(m[5].str(), app::csv_field(class_names().at(std::stoul(m[4].str())))) << rows[i];
  }
  EXPECT_EQ(rows[1 + 8 * kTestPerClass].rfind("24,8,\"T-shirt, \"\"top\"\"\",", 0), 0u)
      << rows[1 + 8 * kTestPerClass];

  // The thread budget changes nothing in the predictions, to the last printed digit.
  const auto one = sluice("predict --model-dir model --output one.csv --threads 1", *dir_);
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(testing::read_file((*dir_ / "one.csv").string()),
            testing::read_file((*dir_ / "preds.csv").string()));
  const auto refused = sluice("predict --model-dir model --threads -1", *dir_);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("thread budget must be >= 0, got -1"), std::string::npos)
      << refused.output;
}

}  // namespace
}  // namespace sluice
