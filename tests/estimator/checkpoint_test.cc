// The checkpoint file format and index: round trip, detection of damage, atomic replacement.
#include "sluice/estimator/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/estimator/second_or_step_timer.h"
#include "tests/estimator/testing.h"

namespace sluice {
namespace {

using CheckpointTest = testing::ModelDirTest;

TensorMap sample() {
  TensorMap m;
  m.emplace("global_step", Tensor::scalar<int64_t>(42));
  m.emplace("model/dense/kernel", Tensor::from_vector<float>({1.5f, -2.0f, 3.25f, 0.0f}, {2, 2}));
  m.emplace("bytes", Tensor::from_vector<uint8_t>({1, 2, 3}));
  return m;
}

TEST_F(CheckpointTest, RoundTripsEveryTensor) {
  std::filesystem::create_directories(dir_);
  write_checkpoint_file(path("model.ckpt-42"), sample());
  const TensorMap read = read_checkpoint_file(path("model.ckpt-42"));
  ASSERT_EQ(read.size(), 3u);
  for (const auto& [name, tensor] : sample()) EXPECT_TRUE(read.at(name).equals(tensor)) << name;
  EXPECT_FALSE(std::filesystem::exists(path("model.ckpt-42.tmp") + std::to_string(getpid())));
}

TEST_F(CheckpointTest, EveryTruncationAndEveryFlippedByteIsDataLoss) {
  std::filesystem::create_directories(dir_);
  const std::string file = path("model.ckpt-1");
  write_checkpoint_file(file, sample());
  const std::string bytes = read_whole_file(file);
  for (size_t n = 0; n < bytes.size(); n += 7) {
    write_file_atomically(file, bytes.substr(0, n));
    EXPECT_THROW(read_checkpoint_file(file), DataLoss) << "truncated to " << n;
  }
  for (size_t i = 0; i < bytes.size(); i += 5) {
    std::string b = bytes;
    b[i] ^= 0x40;
    write_file_atomically(file, b);
    EXPECT_THROW(read_checkpoint_file(file), DataLoss) << "byte " << i;
  }
  EXPECT_THROW(read_checkpoint_file(path("missing")), NotFound);
}

// A tensor of megabytes (an input position's batches) goes to the file from its own memory,
// between small ones that are gathered: the file reads back whole, and its CRC covers the large
// tensor's bytes too.
TEST_F(CheckpointTest, LargeTensorsAmongSmallOnesRoundTripUnderTheCrc) {
  std::filesystem::create_directories(dir_);
  TensorMap m = sample();
  std::vector<float> values(300000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  m.emplace("input/position", Tensor::from_vector<float>(values));
  m.emplace("model/bias", Tensor::from_vector<float>({0.25f}));
  const std::string file = path("model.ckpt-3");
  write_checkpoint_file(file, m);
  const TensorMap read = read_checkpoint_file(file);
  ASSERT_EQ(read.size(), m.size());
  for (const auto& [name, tensor] : m) EXPECT_TRUE(read.at(name).equals(tensor)) << name;

  std::string bytes = read_whole_file(file);
  bytes[bytes.size() / 2] ^= 0x01;  // Inside the large tensor.
  write_file_atomically(file, bytes);
  EXPECT_THROW(read_checkpoint_file(file), DataLoss);
}

TEST_F(CheckpointTest, ManagerKeepsTheNewestAndIndexesThem) {
  CheckpointManager manager(dir_, 3);
  for (int64_t step : {0, 5, 10, 15, 20}) {
    TensorMap m = sample();
    m["global_step"] = Tensor::scalar<int64_t>(step);
    manager.save(step, m);
  }
  const auto state = read_checkpoint_state(dir_);
  ASSERT_TRUE(state);
  EXPECT_EQ(state->model_checkpoint_path, "model.ckpt-20");
  EXPECT_EQ(state->all_model_checkpoint_paths,
            (std::vector<std::string>{"model.ckpt-10", "model.ckpt-15", "model.ckpt-20"}));
  EXPECT_FALSE(std::filesystem::exists(path("model.ckpt-5")));
  EXPECT_TRUE(std::filesystem::exists(path("model.ckpt-10")));
  const auto restored = manager.restore_latest();
  ASSERT_TRUE(restored);
  EXPECT_EQ(restored->tensors.at("global_step").item<int64_t>(), 20);

  // Without an index the files are found by name; a corrupt newest falls back with a message.
  std::filesystem::remove(path("checkpoint"));
  { std::ofstream(path("model.ckpt-20"), std::ios::trunc) << "garbage"; }
  ::testing::internal::CaptureStderr();
  const auto fallback = manager.restore_latest();
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(fallback);
  EXPECT_EQ(fallback->tensors.at("global_step").item<int64_t>(), 15);
  EXPECT_NE(err.find("falling back"), std::string::npos) << err;
}

// A pid that no process has any more: a child that has exited and been reaped.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST_F(CheckpointTest, SaveDeletesTheTemporaryFilesOfWritersNoLongerRunning) {
  std::filesystem::create_directories(dir_);
  const std::string dead = std::to_string(dead_pid());
  const std::string alive = std::to_string(::getppid());
  const std::string self = std::to_string(::getpid());
  const std::vector<std::string> abandoned = {"model.ckpt-7.tmp" + dead, "checkpoint.tmp" + dead};
  // A live writer may be mid-write; other files are not the checkpoints' to delete.
  const std::vector<std::string> kept = {"model.ckpt-8.tmp" + alive, "model.ckpt-3.tmp" + self,
                                         "notes.tmp" + dead,         "model.ckpt-7.tmp",
                                         "model.ckpt-7.tmpx" + dead, "checkpoint.tmp0"};
  for (const auto& names : {abandoned, kept}) {
    for (const auto& name : names) std::ofstream(path(name)) << "partial";
  }
  CheckpointManager(dir_, 0).save(9, sample());
  for (const auto& name : abandoned) EXPECT_FALSE(std::filesystem::exists(path(name))) << name;
  for (const auto& name : kept) EXPECT_TRUE(std::filesystem::exists(path(name))) << name;
  EXPECT_TRUE(std::filesystem::exists(path("model.ckpt-9")));
}

TEST_F(CheckpointTest, StepNamesParse) {
  EXPECT_EQ(checkpoint_step("model.ckpt-250"), 250);
  EXPECT_EQ(checkpoint_step("model.ckpt-"), std::nullopt);
  EXPECT_EQ(checkpoint_step("model.ckpt-12.tmp1"), std::nullopt);
  EXPECT_EQ(checkpoint_step("checkpoint"), std::nullopt);
}

TEST(SecondOrStepTimerTest, FiresFirstThenEveryNSteps) {
  SecondOrStepTimer timer(std::nullopt, 5);
  EXPECT_TRUE(timer.should_trigger_for_step(1));
  EXPECT_FALSE(timer.update_last_triggered_step(1).has_value());
  EXPECT_FALSE(timer.should_trigger_for_step(1));
  EXPECT_FALSE(timer.should_trigger_for_step(5));
  EXPECT_TRUE(timer.should_trigger_for_step(6));
  const auto elapsed = timer.update_last_triggered_step(6);
  ASSERT_TRUE(elapsed);
  EXPECT_EQ(elapsed->second, 5);
  EXPECT_THROW(SecondOrStepTimer(1.0, 5), InvalidArgument);
  EXPECT_THROW(SecondOrStepTimer(std::nullopt, std::nullopt), InvalidArgument);
}

}  // namespace
}  // namespace sluice
