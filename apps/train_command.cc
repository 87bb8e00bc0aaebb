// `sluice train`: trains a model on a dataset with the Estimator, epoch by epoch with Keras-style
// progress, then evaluates it on the test split.
#include <oneapi/tbb/global_control.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "apps/commands.h"
#include "apps/model_setup.h"
#include "apps/report.h"
#include "apps/train_data.h"
#include "core/errors.h"
#include "core/random.h"
#include "estimator/basic_session_run_hooks.h"
#include "estimator/checkpoint.h"
#include "estimator/estimator.h"
#include "estimator/progress_hook.h"
#include "model/keras_weights.h"

namespace sluice::app {
namespace {

struct TrainFlags {
  ModelChoice choice;
  int64_t epochs = 3;
  int64_t steps = 0;
  std::string model_dir;
  int threads = 0;
  bool json = false;
  std::string export_path;
};

// The global step of the newest readable checkpoint in `dir` (0 when there is none).
int64_t restored_step(const std::string& dir) {
  if (dir.empty() || !std::filesystem::exists(dir)) return 0;
  const auto restored = CheckpointManager(dir, 0).restore_latest();
  return restored ? restored->tensors.at("global_step").item<int64_t>() : 0;
}

void run_train(const TrainFlags& flags) {
  using Clock = std::chrono::steady_clock;
  const auto wall_start = Clock::now();
  std::unique_ptr<oneapi::tbb::global_control> limit;
  if (flags.threads > 0) {
    // The model's parallel loops run in TBB's default arena: cap it with the pipeline's budget.
    limit = std::make_unique<oneapi::tbb::global_control>(
        oneapi::tbb::global_control::max_allowed_parallelism, static_cast<size_t>(flags.threads));
  }
  if (flags.epochs <= 0) throw InvalidArgument("--epochs must be > 0");
  if (flags.steps < 0) throw InvalidArgument("--steps must be > 0");

  const TrainData data = open_train_data(flags.choice.data, flags.choice.batch, kAutotune);
  const int64_t steps_per_epoch = (data.train_examples + flags.choice.batch - 1) / flags.choice.batch;
  if (steps_per_epoch <= 0) throw InvalidArgument("--data " + data.name + " has no training examples");
  const int64_t total_steps = flags.steps > 0 ? flags.steps : flags.epochs * steps_per_epoch;
  const int64_t epochs = (total_steps + steps_per_epoch - 1) / steps_per_epoch;

  RunConfig config;
  config.model_dir = flags.model_dir;
  config.tf_random_seed = flags.choice.seed;
  config.save_checkpoints_secs = 600;
  config.keep_checkpoint_max = 5;
  if (flags.threads > 0) config.input_options.threads = flags.threads;
  ModelChoice choice = flags.choice;
  choice.decay_steps = total_steps;
  Estimator estimator(make_model_spec(choice), config);
  save_model_choice(estimator.model_dir(), choice);

  std::printf("Training %s on %s: %lld examples, batch %lld, %lld steps/epoch, %s lr %g (%s), "
              "model_dir %s\n",
              flags.choice.model.c_str(), data.name.c_str(),
              static_cast<long long>(data.train_examples), static_cast<long long>(flags.choice.batch),
              static_cast<long long>(steps_per_epoch), flags.choice.optimizer.c_str(),
              effective_learning_rate(flags.choice),
              choice.schedule == "cosine" || (choice.schedule == "auto" && choice.optimizer == "adam")
                  ? "cosine decay"
                  : "constant",
              estimator.model_dir().c_str());
  std::fflush(stdout);

  const bool interactive = progress_output_is_interactive(stdout);
  const int64_t start_step = restored_step(estimator.model_dir());
  double train_seconds = 0;
  int64_t examples = 0;
  for (int64_t epoch = start_step / steps_per_epoch; epoch < epochs; ++epoch) {
    const int64_t last_step = std::min(total_steps, (epoch + 1) * steps_per_epoch);
    ProgressBarHook progress({.title = "Epoch " + std::to_string(epoch + 1) + "/" +
                                       std::to_string(epochs),
                              .target_steps = last_step - epoch * steps_per_epoch,
                              .interactive = interactive});
    TimeHistoryHook history;
    // Each epoch reshuffles with its own seed, so a resumed run sees the order a straight one would.
    estimator.train(data.train(mix_seed(flags.choice.seed, static_cast<uint64_t>(epoch))),
                    {&progress, &history}, std::nullopt, last_step);
    train_seconds += history.total_seconds();
    examples += history.examples();
  }
  const EvalResult test = estimator.evaluate(data.test);
  std::printf("test: loss %.4f - accuracy %.4f (global step %lld)\n", test.at("loss"),
              test.at("accuracy"), static_cast<long long>(test.at("global_step")));
  if (!flags.export_path.empty()) {
    save_weights(estimator.model(), flags.export_path);
    std::printf("weights exported to %s\n", flags.export_path.c_str());
  }
  std::printf("wall time %.1f s\n",
              std::chrono::duration<double>(Clock::now() - wall_start).count());

  Report report;
  report.add("epochs", static_cast<long long>(epochs));
  report.add("steps", static_cast<long long>(estimator.global_step()));
  report.add("train_seconds", train_seconds, 2);
  report.add("examples_per_sec", train_seconds > 0 ? double(examples) / train_seconds : 0.0, 0);
  report.add("test_accuracy", test.at("accuracy"), 4);
  report.add("test_loss", test.at("loss"), 4);
  report.print(flags.json);
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto flags = std::make_shared<TrainFlags>();
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a model with the Estimator, then evaluate it on the test split "
               "(default: fashion-cnn on Fashion-MNIST, Adam lr 0.004 with cosine decay, 3 epochs; "
               "the tutorial's recipe, SGD lr 0.01 momentum 0.5, is --optimizer sgd)");
  cmd->add_option("--data", flags->choice.data,
                  "fashion-mnist, or an image folder (class sub-folders; train/ and test/ "
                  "sub-folders as splits) or a zip/tar of one")
      ->capture_default_str();
  cmd->add_option("--model", flags->choice.model, "preset name or Keras JSON file")
      ->capture_default_str();
  cmd->add_option("--epochs", flags->epochs, "passes over the training data")->capture_default_str();
  cmd->add_option("--steps", flags->steps, "total global steps instead of --epochs");
  cmd->add_option("--batch", flags->choice.batch, "batch size")->capture_default_str();
  cmd->add_option("--optimizer", flags->choice.optimizer, "sgd | adam | rmsprop")
      ->capture_default_str();
  cmd->add_option("--lr", flags->choice.learning_rate,
                  "learning rate (default: adam 0.004, sgd 0.01, rmsprop 0.001)");
  cmd->add_option("--momentum", flags->choice.momentum, "SGD momentum")->capture_default_str();
  cmd->add_option("--schedule", flags->choice.schedule,
                  "learning rate schedule: auto (cosine for adam) | constant | cosine (decay to 0 "
                  "over the run)")
      ->capture_default_str();
  cmd->add_option("--model-dir", flags->model_dir,
                  "checkpoints and TensorBoard events; training resumes from its latest "
                  "checkpoint (default: a new temporary directory)");
  cmd->add_option("--seed", flags->choice.seed, "seed of initialisation and shuffling")
      ->capture_default_str();
  cmd->add_option("--threads", flags->threads, "thread budget (default: all cores)");
  cmd->add_option("--export", flags->export_path, "write the trained weights as Keras HDF5");
  cmd->add_flag("--json", flags->json, "print the last line as one JSON object");
  cmd->callback([flags] { run_train(*flags); });
}

}  // namespace sluice::app
