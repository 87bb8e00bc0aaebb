// Issue 6's crash test: a training process killed with SIGKILL at random moments (mid-step,
// mid-checkpoint, mid-index) leaves a model_dir from which training resumes at the last
// checkpoint's step, with a loadable model, every time.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "estimator/checkpoint.h"
#include "tests/estimator/inputs.h"
#include "tests/estimator/testing.h"

extern char** environ;

namespace sluice {
namespace {

using testing::ModelDirTest;

// Starts the worker on `dir` and returns its pid.
pid_t spawn_worker(const std::string& dir) {
  std::string program = SLUICE_KILL_RESUME_WORKER;
  std::vector<char*> argv{program.data(), const_cast<char*>(dir.c_str()), nullptr};
  pid_t pid = 0;
  EXPECT_EQ(::posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv.data(), environ), 0);
  return pid;
}

// The step of the newest checkpoint the index names (0 when there is no index yet).
int64_t indexed_step(const std::string& dir) {
  try {
    const auto state = read_checkpoint_state(dir);
    return state ? checkpoint_step(state->model_checkpoint_path).value_or(0) : 0;
  } catch (const DataLoss&) {
    return 0;  // Being replaced right now: the rename is atomic, so this is a reader's race only.
  }
}

using KillResumeTest = ModelDirTest;

TEST_F(KillResumeTest, ResumesFromTheLastCheckpointAfterSigkillAtRandomMoments) {
  std::mt19937 rng(20261121);
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::filesystem::remove_all(dir_);
    const pid_t pid = spawn_worker(dir_);
    ASSERT_GT(pid, 0);
    // Let it get past its first checkpoints, then kill it somewhere in the steady state.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (indexed_step(dir_) < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::this_thread::sleep_for(
        std::chrono::microseconds(std::uniform_int_distribution<int>(0, 150'000)(rng)));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the worker ended by itself, status " << status;

    // Every checkpoint the index names is complete, and the latest is where training resumes.
    const auto state = read_checkpoint_state(dir_);
    ASSERT_TRUE(state.has_value());
    for (const std::string& name : state->all_model_checkpoint_paths) {
      EXPECT_NO_THROW(read_checkpoint_file(dir_ + "/" + name)) << name;
    }
    const auto restored = CheckpointManager(dir_, 0).restore_latest();
    ASSERT_TRUE(restored.has_value());
    const int64_t step = restored->tensors.at("global_step").item<int64_t>();
    EXPECT_EQ("model.ckpt-" + std::to_string(step), state->model_checkpoint_path);
    EXPECT_GE(step, 2);

    Estimator resumed(testing::tiny_spec(), config(/*save_steps=*/1));
    resumed.train(testing::separable_input(64, 8), {}, /*steps=*/3);
    EXPECT_EQ(resumed.global_step(), step + 3);
    // The resumed model is the checkpoint's, trained on: its weights moved from those saved.
    const TensorMap saved = restored->tensors;
    const TensorMap now = resumed.state();
    bool moved = false;
    for (const auto& [key, tensor] : now) {
      if (key.rfind("model/", 0) != 0) continue;
      ASSERT_TRUE(saved.count(key)) << key;
      const auto a = saved.at(key).values<float>();
      const auto b = tensor.values<float>();
      for (size_t i = 0; i < a.size(); ++i) moved |= a[i] != b[i];
    }
    EXPECT_TRUE(moved);
  }
}

}  // namespace
}  // namespace sluice
