// `sluice train`, `evaluate` and `predict` on a user's own data, run as a user runs them: each
// way a run could report a plausible wrong figure with exit status 0 (unshuffled records, an
// unsplit archive, evaluation on the training data, labels the model cannot have, classes
// numbered again, a resume that rewrites model_dir) and the flags a user can get wrong.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "sluice/core/random.h"
#include "sluice/core/tensor.h"
#include "sluice/estimator/checkpoint.h"
#include "sluice/formats/example_values.h"
#include "sluice/formats/png.h"
#include "sluice/formats/tfrecord_writer.h"
#include "tests/apps/run_program.h"
#include "tests/formats/testing.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::field;
using testing::ProgramRun;

const char* const kClasses[] = {"a", "b", "c"};

// A 28×28 grey image of class `label`: horizontal, vertical or diagonal stripes under noise.
Tensor pattern(int label, Random& random) {
  Tensor image(DType::kUInt8, Shape{28, 28, 1});
  uint8_t* p = image.data<uint8_t>();
  for (int y = 0; y < 28; ++y) {
    for (int x = 0; x < 28; ++x) {
      const int line = label == 0 ? y : label == 1 ? x : x + y;
      const int value = (line / 2) % 2 ? 200 : 40;
      p[y * 28 + x] = static_cast<uint8_t>(value + static_cast<int>(random.next_u64() % 50));
    }
  }
  return image;
}

// One fixture for the suite: the folder with train/ and test/ splits, the same folder zipped,
// and the same images as class-sorted TFRecords, written once.
class TrainCommandTest : public ::testing::Test {
 public:
  static std::string path(const std::string& name) { return (*root_ / name).string(); }

 protected:
  static void SetUpTestSuite() {
    root_ = new fs::path(fs::temp_directory_path() /
                         ("sluice-train-command-" + std::to_string(::getpid())));
    fs::create_directories(*root_);
    Random random(5);
    TFRecordWriter train_records((*root_ / "fm-train-00000-of-00001").string());
    TFRecordWriter test_records((*root_ / "fm-test-00000-of-00001").string());
    for (const auto& [split, count] : {std::pair{"train", 40}, std::pair{"test", 15}}) {
      for (int label = 0; label < 3; ++label) {
        const fs::path dir = *root_ / "images" / split / kClasses[label];
        fs::create_directories(dir);
        for (int i = 0; i < count; ++i) {
          const std::string png = encode_png(pattern(label, random));
          testing::write_file((dir / (std::to_string(i) + ".png")).string(), png);
          // Records as `sluice records convert` writes them: sorted by class.
          ExampleValues e;
          e["image/encoded"] = FeatureValues::of_bytes({png});
          e["image/class/label"] = FeatureValues::of_ints({label});
          e["image/class/text"] = FeatureValues::of_bytes({kClasses[label]});
          (std::string(split) == "train" ? train_records : test_records)
              .write(serialize_example(e));
        }
      }
    }
    testing::zip_directory((*root_ / "images").string(), (*root_ / "images.zip").string());
  }
  static void TearDownTestSuite() {
    fs::remove_all(*root_);
    delete root_;
  }

  static ProgramRun sluice(const std::string& args) {
    return testing::run_program(SLUICE_CLI, args, *root_);
  }
  // A short training run on `data` into a new model_dir `dir` (40 steps: enough for the
  // batch normalisation's moving statistics to settle).
  static ProgramRun train(const std::string& data, const std::string& dir,
                          const std::string& more = "", int epochs = 5) {
    return sluice("train --data '" + data + "' --model-dir '" + path(dir) + "' --epochs " +
                  std::to_string(epochs) + " --batch 16 --threads 2 --seed 1 " + more);
  }
  static double number(const ProgramRun& run, const std::string& key) {
    const std::string value = field(run.last_line, key);
    return value.empty() || value == "none" ? NAN : std::stod(value);
  }

  static fs::path* root_;
};

fs::path* TrainCommandTest::root_ = nullptr;

TEST_F(TrainCommandTest, ClassSortedRecordsTrainAsWellAsTheFolder) {
  const ProgramRun folder = train(path("images"), "folder-run");
  ASSERT_EQ(folder.exit_code, 0) << folder.output;
  EXPECT_NE(folder.output.find("Training fashion-cnn-wide on "), std::string::npos)
      << "the default model: " << folder.output;
  const ProgramRun records = train(path("fm-train-*"), "records-run");
  ASSERT_EQ(records.exit_code, 0) << records.output;
  // The test split beside the train glob is found, and nothing else is evaluated.
  EXPECT_NE(records.output.find("Found 45 images belonging to 3 classes"), std::string::npos)
      << records.output;
  const double folder_accuracy = number(folder, "test_accuracy");
  const double records_accuracy = number(records, "test_accuracy");
  EXPECT_GT(folder_accuracy, 0.8) << folder.output;
  // Unshuffled, the records would be seen a class at a time and end near a third.
  EXPECT_GT(records_accuracy, folder_accuracy - 0.1) << records.output;
}

// In 24 steps the weights move fast: batch statistics kept as moving averages that lag behind
// them would leave a model right on every training batch near chance on the test split.
TEST_F(TrainCommandTest, AShortRunOfTheDefaultModelEvaluatesAsItTrains) {
  const ProgramRun run = train(path("images"), "short-run", "", /*epochs=*/3);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_GT(number(run, "test_accuracy"), 0.9) << run.output;
}

TEST_F(TrainCommandTest, AZipWithSplitsIsReadExactlyAsTheFolder) {
  const ProgramRun folder = train(path("images"), "split-folder");
  const ProgramRun zip = train(path("images.zip"), "split-zip");
  ASSERT_EQ(zip.exit_code, 0) << zip.output;
  EXPECT_NE(zip.output.find("Found 120 images belonging to 3 classes in train/: a, b, c"),
            std::string::npos)
      << zip.output;
  EXPECT_NE(zip.output.find("Found 45 images belonging to 3 classes in test/"), std::string::npos)
      << zip.output;
  // Same files, same order, same seed: the same figures to the last digit.
  EXPECT_EQ(field(zip.last_line, "test_accuracy"), field(folder.last_line, "test_accuracy"));
  EXPECT_EQ(field(zip.last_line, "test_loss"), field(folder.last_line, "test_loss"));
}

TEST_F(TrainCommandTest, DataWithoutAHeldOutSplitIsNeverEvaluatedOnItsTrainingData) {
  const ProgramRun plain = train(path("images/train"), "train-only");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(field(plain.last_line, "test_accuracy"), "none") << plain.last_line;
  EXPECT_NE(plain.output.find("no evaluation"), std::string::npos) << plain.output;
  const ProgramRun split = train(path("images/train"), "train-split", "--validation-split 0.25");
  ASSERT_EQ(split.exit_code, 0) << split.output;
  const double accuracy = number(split, "test_accuracy");
  EXPECT_GE(accuracy, 0.0);
  // The held-out files are chosen by name: about a quarter, the same on every run, none trained.
  const size_t at = split.output.find("Found ");
  ASSERT_NE(at, std::string::npos);
  const int trained = std::stoi(split.output.substr(at + 6));
  EXPECT_GT(trained, 70);
  EXPECT_LT(trained, 110);
  // A folder holding only a train/ split is no different.
  fs::create_directories(path("only-train"));
  fs::copy(path("images/train"), path("only-train/train"), fs::copy_options::recursive);
  const ProgramRun only = train(path("only-train"), "only-train-run");
  ASSERT_EQ(only.exit_code, 0) << only.output;
  EXPECT_EQ(field(only.last_line, "test_accuracy"), "none");
  EXPECT_NE(only.output.find("3 classes in train/: a, b, c"), std::string::npos) << only.output;
}

TEST_F(TrainCommandTest, ABinaryModelRefusesThreeClassesBeforeTheFirstStep) {
  const ProgramRun run = train(path("images"), "binary", "--model cats-dogs-cnn");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("2 classes"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("Epoch 1"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(path("binary/sluice_model.json")));
}

TEST_F(TrainCommandTest, ALabelOutsideTheModelsClassesNamesTheFileAndRecord) {
  ASSERT_EQ(train(path("images"), "labels").exit_code, 0);
  {
    TFRecordWriter writer(path("seven.tfrecord"));
    Random random(3);
    for (int64_t label : {0, 1, 7}) {
      ExampleValues e;
      e["image/encoded"] = FeatureValues::of_bytes({encode_png(pattern(0, random))});
      e["image/class/label"] = FeatureValues::of_ints({label});
      writer.write(serialize_example(e));
    }
  }
  const ProgramRun run = sluice("evaluate --model-dir '" + path("labels") + "' --data '" +
                                path("seven.tfrecord") + "'");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("label 7"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("seven.tfrecord record 2"), std::string::npos) << run.output;
}

TEST_F(TrainCommandTest, ClassesMapByNameAndAnUnknownClassIsNamed) {
  ASSERT_EQ(train(path("images"), "names").exit_code, 0);
  fs::create_directories(path("only-c"));
  fs::copy(path("images/test/c"), path("only-c/c"), fs::copy_options::recursive);
  const ProgramRun run =
      sluice("evaluate --model-dir '" + path("names") + "' --data '" + path("only-c") + "'");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // Numbered again from 0, "c" would be scored as "a" and get nothing right.
  EXPECT_GT(number(run, "accuracy"), 0.6) << run.output;
  fs::create_directories(path("with-d/d"));
  fs::copy(path("images/test/a/0.png"), path("with-d/d/0.png"));
  const ProgramRun unknown =
      sluice("evaluate --model-dir '" + path("names") + "' --data '" + path("with-d") + "'");
  EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
  EXPECT_NE(unknown.output.find("with-d/d is not one of the model's 3 classes"), std::string::npos)
      << unknown.output;
}

TEST_F(TrainCommandTest, AResumeWithoutFlagsKeepsModelDirAndAContradictionChangesNothing) {
  ASSERT_EQ(train(path("images"), "resume", "", 1).exit_code, 0);
  const std::string kept = testing::read_file(path("resume/sluice_model.json"));
  const ProgramRun contradiction = sluice("train --model-dir '" + path("resume") + "' --batch 32");
  EXPECT_EQ(contradiction.exit_code, 1) << contradiction.output;
  EXPECT_NE(contradiction.output.find("--batch 32 contradicts the batch 16"), std::string::npos)
      << contradiction.output;
  EXPECT_EQ(testing::read_file(path("resume/sluice_model.json")), kept);
  const ProgramRun resumed = sluice("train --model-dir '" + path("resume") + "' --epochs 2");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(testing::read_file(path("resume/sluice_model.json")), kept);
  EXPECT_NE(resumed.output.find("Epoch 2/2"), std::string::npos) << resumed.output;
  const ProgramRun evaluate = sluice("evaluate --model-dir '" + path("resume") + "'");
  EXPECT_EQ(evaluate.exit_code, 0) << evaluate.output;
  EXPECT_EQ(field(evaluate.last_line, "accuracy"), field(resumed.last_line, "test_accuracy"));
}

TEST_F(TrainCommandTest, ATFRecordFileNamedTheTFWayTrains) {
  fs::copy_file(path("fm-train-00000-of-00001"), path("fm-00000-of-00002"));
  const ProgramRun run = train(path("fm-00000-of-00002"), "of-file", "--validation-split 0.2");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_FALSE(std::isnan(number(run, "test_accuracy"))) << run.output;
}

TEST_F(TrainCommandTest, TheTPUStrategyTrainsOnFullBatchesOnly) {
  // 120 training images in batches of 16: 7 full batches an epoch, the partial eighth dropped, as a
  // TPU takes only static shapes.
  const ProgramRun run = train(path("images"), "tpu", "--strategy tpu:2", 2);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(field(run.last_line, "global_step"), "14") << run.output;
  EXPECT_FALSE(std::isnan(number(run, "test_accuracy"))) << run.output;
}

TEST_F(TrainCommandTest, TheEvaluationLossIsTheMeanOverExamplesAtAnyBatchSize) {
  ASSERT_EQ(train(path("images"), "loss").exit_code, 0);
  const ProgramRun seven = sluice("evaluate --model-dir '" + path("loss") + "' --batch 7");
  const ProgramRun forty = sluice("evaluate --model-dir '" + path("loss") + "' --batch 40");
  ASSERT_EQ(seven.exit_code, 0) << seven.output;
  ASSERT_EQ(forty.exit_code, 0) << forty.output;
  EXPECT_NEAR(number(seven, "loss"), number(forty, "loss"), 2e-4);
  EXPECT_EQ(field(seven.last_line, "accuracy"), field(forty.last_line, "accuracy"));
}

TEST_F(TrainCommandTest, ImagesOfAnotherSizeAreResizedOnRequestAndNamedOtherwise) {
  const fs::path dir = path("sizes");
  Random random(9);
  for (int label = 0; label < 2; ++label) {
    fs::create_directories(dir / kClasses[label]);
    for (int i = 0; i < 4; ++i) {
      testing::write_file((dir / kClasses[label] / (std::to_string(i) + ".png")).string(),
                          encode_png(pattern(label, random)));
    }
  }
  Tensor big(DType::kUInt8, Shape{40, 36, 3});
  testing::write_file((dir / "b" / "big.png").string(), encode_png(big));
  const ProgramRun refused = train(dir.string(), "sizes-refused", "--validation-split 0.3");
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("b/big.png is 40x36"), std::string::npos) << refused.output;
  const ProgramRun resized =
      train(dir.string(), "sizes-resized", "--validation-split 0.3 --image-size 32");
  EXPECT_EQ(resized.exit_code, 0) << resized.output;
}

TEST_F(TrainCommandTest, NumbersAUserCanGetWrongAreErrors) {
  for (const std::string flags : {"--lr 0", "--lr -1", "--threads -1", "--seed -1",
                                  "--image-size 0", "--batch 0", "--validation-split 1"}) {
    const ProgramRun run = train(path("images"), "bad-flags", flags);
    EXPECT_NE(run.exit_code, 0) << flags << "\n" << run.output;
    EXPECT_EQ(run.output.find("Epoch 1"), std::string::npos) << flags;
  }
  EXPECT_FALSE(fs::exists(path("bad-flags/sluice_model.json")));
}

TEST_F(TrainCommandTest, WithoutAModelDirNothingIsLeftBehindUnlessKept) {
  const std::string temp = path("tmp");
  fs::create_directories(temp);
  const char* before = std::getenv("TMPDIR");
  const std::string saved = before ? before : "";
  ::setenv("TMPDIR", temp.c_str(), 1);
  const ProgramRun removed = sluice("train --data '" + path("images") + "' --epochs 1");
  EXPECT_EQ(removed.exit_code, 0) << removed.output;
  EXPECT_TRUE(fs::is_empty(temp));
  const ProgramRun failed = sluice("train --data '" + path("images") + "' --model cats-dogs-cnn");
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  EXPECT_TRUE(fs::is_empty(temp));
  const ProgramRun kept =
      sluice("train --data '" + path("images") + "' --epochs 1 --keep-model-dir");
  EXPECT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_EQ(std::distance(fs::directory_iterator(temp), fs::directory_iterator()), 1);
  if (before) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
}

TEST_F(TrainCommandTest, TheModelDescriptionLeftHalfWrittenByAKilledRunIsRemoved) {
  ASSERT_EQ(train(path("images"), "half-written", "", 1).exit_code, 0);
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_EQ(waitpid(dead, nullptr, 0), dead);
  const std::string left = path("half-written/sluice_model.json.tmp" + std::to_string(dead));
  const std::string live = path("half-written/sluice_model.json.tmp" + std::to_string(getpid()));
  testing::write_file(left, "{\"model\": ");
  testing::write_file(live, "{");
  ASSERT_EQ(sluice("train --model-dir '" + path("half-written") + "' --epochs 2").exit_code, 0);
  EXPECT_FALSE(fs::exists(left));
  EXPECT_TRUE(fs::exists(live));  // A writer still running may be mid-write.
}

TEST_F(TrainCommandTest, EvaluateWithoutACheckpointIsNotFound) {
  // What a SIGKILL during the first checkpoint write leaves: the run's choices, no checkpoint.
  ASSERT_EQ(train(path("images"), "empty-dir", "", 1).exit_code, 0);
  for (const auto& entry : fs::directory_iterator(path("empty-dir"))) {
    if (entry.path().filename() != "sluice_model.json") fs::remove_all(entry.path());
  }
  const ProgramRun run = sluice("evaluate --model-dir '" + path("empty-dir") + "'");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("NotFound"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("no checkpoint"), std::string::npos) << run.output;
}

// Starts `sluice args...` with its output discarded; returns its pid.
pid_t spawn_sluice(const std::vector<std::string>& args) {
  std::vector<char*> argv{const_cast<char*>(SLUICE_CLI)};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, SLUICE_CLI, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// The global steps of the checkpoints in `dir`.
std::vector<int64_t> checkpoint_steps(const fs::path& dir) {
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("model.ckpt-", 0) == 0 && name.find(".tmp") == std::string::npos) {
      steps.push_back(std::stoll(name.substr(11)));
    }
  }
  return steps;
}

// The step of the checkpoint the index in `dir` names as the latest, -1 when none.
int64_t indexed_step(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir / "checkpoint", ec)) return -1;
  const std::string index = testing::read_file((dir / "checkpoint").string());
  const std::string key = "model_checkpoint_path: \"model.ckpt-";
  const size_t at = index.find(key);
  if (at == std::string::npos) return -1;
  return std::atoll(index.c_str() + at + key.size());
}

// The tensors of checkpoint `name` in `dir` but the input's position: that one holds the elements
// the pipeline's buffers held when it was saved, which depends on how far its threads had run
// ahead, so two runs that read the same stream save it in different bytes.
TensorMap training_state(const fs::path& dir, const std::string& name) {
  TensorMap tensors = read_checkpoint_file((dir / name).string());
  EXPECT_EQ(tensors.erase("input/state"), 1u) << name << " in " << dir;
  return tensors;
}

// Whether two tensor maps hold the same keys, dtypes, shapes and bytes.
bool same_bytes(const TensorMap& a, const TensorMap& b) {
  return std::ranges::equal(a, b, [](const auto& x, const auto& y) {
    return x.first == y.first && x.second.dtype() == y.second.dtype() &&
           x.second.shape() == y.second.shape() &&
           std::memcmp(x.second.raw_data(), y.second.raw_data(), x.second.byte_size()) == 0;
  });
}

// A run killed at a random moment after a mid-epoch checkpoint and started again with the same
// command ends with the very training state a straight run ends with, byte for byte (weights,
// statistics, optimizer slots, global step and random streams): it resumed with the weights, the
// optimizer and the input position of the step it saved. The checkpoints both runs keep are
// compared, the last five.
void expect_killed_run_resumes_exactly(const std::string& name, const std::string& strategy) {
  // 15 steps an epoch, a checkpoint every 7: most checkpoints fall inside an epoch.
  std::vector<std::string> args = {"train",    "--data",    TrainCommandTest::path("images"),
                                   "--epochs", "40",        "--batch",
                                   "8",        "--threads", "2",
                                   "--seed",   "3",         "--save-checkpoints-steps",
                                   "7",        "--augment"};
  if (!strategy.empty()) args.insert(args.end(), {"--strategy", strategy});
  auto with_dir = [&](const std::string& dir) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--model-dir", TrainCommandTest::path(dir)});
    return a;
  };
  int status = 0;
  const pid_t straight = spawn_sluice(with_dir(name + "-straight"));
  ASSERT_EQ(waitpid(straight, &status, 0), straight);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  const fs::path killed_dir = TrainCommandTest::path(name + "-killed");
  const pid_t killed = spawn_sluice(with_dir(name + "-killed"));
  Random random(static_cast<uint64_t>(::getpid()));
  bool mid_epoch = false;
  while (!mid_epoch) {
    const int64_t latest = indexed_step(killed_dir);
    mid_epoch = latest > 0 && latest % 15 != 0;
    if (waitpid(killed, &status, WNOHANG) == killed) {
      GTEST_SKIP() << "the run ended before it could be killed";
    }
    usleep(200);
  }
  usleep(static_cast<useconds_t>(random.next_u64() % 20000));
  ASSERT_EQ(kill(killed, SIGKILL), 0);
  ASSERT_EQ(waitpid(killed, &status, 0), killed);
  // On a busy machine the run may have finished in the moment before the kill.
  if (WIFEXITED(status)) GTEST_SKIP() << "the run ended before it could be killed";
  ASSERT_TRUE(WIFSIGNALED(status));
  const std::vector<int64_t> before = checkpoint_steps(killed_dir);
  const ProgramRun again = testing::run_program(
      SLUICE_CLI,
      "train --data '" + TrainCommandTest::path("images") + "' --model-dir '" +
          killed_dir.string() + "' --epochs 40 --batch 8 --threads 2 --seed 3 " +
          "--save-checkpoints-steps 7 --augment" +
          (strategy.empty() ? "" : " --strategy " + strategy),
      killed_dir.parent_path());
  ASSERT_EQ(again.exit_code, 0) << again.output;
  // The newest checkpoint whose write completed: a kill inside a write leaves the one before.
  const std::string resumed = field(again.last_line, "resumed_from");
  ASSERT_FALSE(resumed.empty()) << again.output;
  EXPECT_NE(std::find(before.begin(), before.end(), std::stoll(resumed)), before.end());
  EXPECT_NE(again.output.find("Resuming from model.ckpt-" + resumed), std::string::npos)
      << again.output;
  // The checkpoint saved the input's position, and the same command's input continues there.
  EXPECT_NE(again.output.find("the input continues from its saved position"), std::string::npos)
      << again.output;
  EXPECT_EQ(field(again.last_line, "global_step"), "600");
  const fs::path straight_dir = TrainCommandTest::path(name + "-straight");
  std::vector<int64_t> kept = checkpoint_steps(straight_dir);
  std::ranges::sort(kept);
  ASSERT_EQ(kept.size(), 5u);
  EXPECT_EQ(kept.back(), 600);
  for (const int64_t step : kept) {
    const std::string checkpoint = "model.ckpt-" + std::to_string(step);
    EXPECT_TRUE(same_bytes(training_state(straight_dir, checkpoint),
                           training_state(killed_dir, checkpoint)))
        << checkpoint << " differs; the killed run resumed from the checkpoint of step " << resumed;
  }
}

TEST_F(TrainCommandTest, AKilledRunResumesExactlyOnOneDevice) {
  expect_killed_run_resumes_exactly("exact-one", "");
}

TEST_F(TrainCommandTest, AKilledRunResumesExactlyWithTwoMirroredReplicas) {
  expect_killed_run_resumes_exactly("exact-mirrored", "mirrored:2");
}

}  // namespace
}  // namespace sluice
