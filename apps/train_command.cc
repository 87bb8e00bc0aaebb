// `sluice train`: trains a model on a dataset with the Estimator, epoch by epoch with Keras-style
// progress, then evaluates it on the test split.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "apps/model_setup.h"
#include "apps/report.h"
#include "apps/temporary_model_dir.h"
#include "apps/train_data.h"
#include "sluice/core/config.h"
#include "sluice/core/errors.h"
#include "sluice/core/random.h"
#include "sluice/core/strings.h"
#include "sluice/core/threads.h"
#include "sluice/dataset/dataset.h"
#include "sluice/estimator/basic_session_run_hooks.h"
#include "sluice/estimator/checkpoint.h"
#include "sluice/estimator/estimator.h"
#include "sluice/estimator/input_pipeline.h"
#include "sluice/estimator/profiler_hook.h"
#include "sluice/estimator/progress_hook.h"
#include "sluice/model/keras_weights.h"
#include "sluice/model/mixed_precision.h"
#include "sluice/model/presets.h"
#include "sluice/strategy/mirrored_strategy.h"
#if SLUICE_WITH_MPI
#include "sluice/strategy/multi_worker_mirrored_strategy.h"
#endif
#include "sluice/strategy/one_device_strategy.h"
#include "sluice/strategy/tpu_strategy.h"

namespace sluice::app {
namespace {

struct TrainFlags {
  ModelChoice choice;
  int64_t epochs = 5;
  int64_t steps = 0;                   // --steps: this many more steps.
  int64_t max_steps = 0;               // --max-steps: stop at this global step.
  int64_t save_checkpoints_steps = 0;  // 0: at every epoch's end.
  std::string model_dir;
  bool keep_model_dir = false;
  int threads = 0;
  bool json = false;
  std::string export_path;
  std::string profile_dir;
  std::string strategy;         // "" (none), one, mirrored[:N], multiworker[:N].
  double worker_timeout = 300;  // multiworker: seconds a collective waits for the others.
  int64_t steps_per_execution = 1;
  std::string mixed_precision = "float32";  // The global policy of the model's layers.
  int64_t seed = 0;                         // Checked, then ModelChoice::seed.
};

// --strategy: one | mirrored[:N] (N replicas, default 2), all on the process's thread budget.
// multiworker[:N]: one worker per process under mpirun, N local replicas each (default 1).
std::shared_ptr<Strategy> make_strategy(const std::string& spec, double worker_timeout = 300) {
  if (spec.empty()) return nullptr;
  if (spec.rfind("multiworker", 0) == 0) {
    int replicas = 1;
    const std::string count = spec.size() > 12 ? spec.substr(12) : "";
    size_t used = 0;
    try {
      if (!count.empty()) replicas = std::stoi(count, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if ((spec.size() > 11 && (spec[11] != ':' || count.empty())) || used != count.size() ||
        replicas < 1) {
      throw InvalidArgument("--strategy " + spec + ": expected multiworker[:N] with N >= 1");
    }
#if SLUICE_WITH_MPI
    return std::make_shared<MultiWorkerMirroredStrategy>(MultiWorkerOptions{
        .local_replicas = replicas, .collective_timeout_seconds = worker_timeout});
#else
    (void)worker_timeout;
    throw Unimplemented("--strategy " + spec +
                        ": this sluice was built without MPI (libopenmpi-dev), which runs "
                        "MultiWorkerMirroredStrategy");
#endif
  }
  if (spec == "one") return std::make_shared<OneDeviceStrategy>();
  // tpu[:N]: a simulated local TPU system of N cores; plain "tpu" resolves as the tutorials'
  // TPUClusterResolver() does (TPU_NAME, SLUICE_TPU_CORES, else 8 cores).
  if (spec == "tpu") return std::make_shared<TPUStrategy>(TPUClusterResolver());
  if (spec.rfind("tpu:", 0) == 0) {
    std::optional<TPUClusterResolver> resolver;
    try {
      resolver.emplace("local:" + spec.substr(4));
    } catch (const InvalidArgument&) {
      throw InvalidArgument("--strategy " + spec + ": expected tpu:N with N >= 1 TPU cores");
    }
    return std::make_shared<TPUStrategy>(*resolver);
  }
  if (spec.rfind("mirrored", 0) == 0) {
    int replicas = 2;
    if (spec.size() > 8) {
      const std::string count = spec.substr(9);
      size_t used = 0;
      try {
        replicas = spec[8] == ':' ? std::stoi(count, &used) : 0;
      } catch (const std::exception&) {
        used = 0;
      }
      if (spec[8] != ':' || used != count.size() || replicas < 1) {
        throw InvalidArgument("--strategy " + spec + ": expected mirrored:N with N >= 1");
      }
    }
    return std::make_shared<MirroredStrategy>(replicas);
  }
  throw InvalidArgument("--strategy " + spec +
                        ": expected one, mirrored[:N], tpu[:N] or multiworker[:N]");
}

bool was_given(const std::vector<std::string>& given, const char* flag) {
  return std::find(given.begin(), given.end(), flag) != given.end();
}

// Checks the numbers a user can get wrong before anything runs.
void check_flags(const TrainFlags& flags, const std::vector<std::string>& given) {
  // Said before training, not after it.
  if (!SLUICE_WITH_HDF5 && !flags.export_path.empty()) {
    throw Unimplemented(
        "--export: this sluice was built without libhdf5 (libhdf5-dev), which "
        "writes Keras HDF5 files");
  }
  if (flags.epochs <= 0) throw InvalidArgument(str_cat("--epochs must be > 0, got ", flags.epochs));
  if (was_given(given, "--steps") && flags.steps <= 0) {
    throw InvalidArgument(str_cat("--steps must be > 0, got ", flags.steps));
  }
  if (was_given(given, "--max-steps") && flags.max_steps <= 0) {
    throw InvalidArgument(str_cat("--max-steps must be > 0, got ", flags.max_steps));
  }
  const int ends =
      was_given(given, "--epochs") + was_given(given, "--steps") + was_given(given, "--max-steps");
  if (ends > 1) throw InvalidArgument("give one of --epochs, --steps and --max-steps");
  if (was_given(given, "--save-checkpoints-steps") && flags.save_checkpoints_steps <= 0) {
    throw InvalidArgument(
        str_cat("--save-checkpoints-steps must be > 0, got ", flags.save_checkpoints_steps));
  }
  if (was_given(given, "--lr") && !(flags.choice.learning_rate > 0)) {
    throw InvalidArgument(str_cat("--lr must be > 0, got ", flags.choice.learning_rate));
  }
  if (flags.threads < 0) {
    throw InvalidArgument(str_cat("--threads must be >= 1, got ", flags.threads));
  }
  if (flags.seed < 0) throw InvalidArgument(str_cat("--seed must be >= 0, got ", flags.seed));
  if (flags.choice.batch <= 0) throw InvalidArgument("--batch must be > 0");
  if (was_given(given, "--image-size") && flags.choice.image_size <= 0) {
    throw InvalidArgument(str_cat("--image-size must be > 0, got ", flags.choice.image_size));
  }
}

// The run's batches, epoch after epoch (each shuffled with its own seed, one epoch's pipeline
// running at a time), as one plan whatever step the run starts at, so that the input position a
// checkpoint saved restores into any later run of the same command. Given a global step
// `skip_to` (for a checkpoint without such a position), the epochs before it are empty and its
// own epoch's batches before it are recomputed and dropped: exact too, the pipeline being
// deterministic, but slower. With `static_batch`, every batch is full (the data drops a partial
// last one) and the dataset says so, for a strategy that takes only static shapes.
InputFn run_input(const TrainData& data, uint64_t seed, int64_t steps_per_epoch, int64_t epochs,
                  int64_t skip_to, std::optional<int64_t> static_batch) {
  const int64_t first_epoch = skip_to / steps_per_epoch;
  const int64_t done_in_epoch = skip_to % steps_per_epoch;
  return [train = data.train, seed, first_epoch, done_in_epoch, epochs, static_batch] {
    const Dataset all = Dataset::range(0, epochs).interleave(
        [train, seed, first_epoch, done_in_epoch](const Tensor& epoch) {
          const int64_t e = epoch.item<int64_t>();
          const Dataset batches = train(mix_seed(seed, static_cast<uint64_t>(e)))();
          if (e < first_epoch) return batches.take(0);
          return e == first_epoch && done_in_epoch > 0 ? batches.skip(done_in_epoch) : batches;
        },
        {.cycle_length = 1});
    // An interleave cannot see into the datasets its function makes, so the epochs' static
    // batch size is lost; batching the full batches again restores it, batch for batch.
    return static_batch ? all.unbatch().batch(*static_batch, /*drop_remainder=*/true) : all;
  };
}

void run_train(TrainFlags flags, const std::vector<std::string>& given) {
  using Clock = std::chrono::steady_clock;
  const auto wall_start = Clock::now();
  check_flags(flags, given);
  flags.choice.seed = static_cast<uint64_t>(flags.seed);
  // The process's thread budget, which the input pipeline, the strategy and the model take. This
  // thread trains, so it is one of the budget's threads.
  const ThreadBudget budget(flags.threads, ThreadBudget::Caller::kComputes);

  // A model_dir trained before keeps the run's choices: flags not given take them, and a flag
  // that contradicts them is an error. Nothing is written there until the whole configuration
  // (data, model, strategy) is known to be valid.
  ModelChoice choice = flags.choice;
  choice.data = absolute_data(choice.data);
  const bool resuming = has_model_choice(flags.model_dir);
  if (resuming) {
    choice =
        resume_choice(load_model_choice(flags.model_dir), flags.choice, given, flags.model_dir);
  }
  // Multi-worker: each worker reads its share of the data at the source, and only the chief
  // prints; errors still reach every worker's stderr.
  std::shared_ptr<Strategy> strategy = make_strategy(flags.strategy, flags.worker_timeout);
  const int workers = strategy ? strategy->num_workers() : 1;
  const int worker = strategy ? strategy->worker_index() : 0;
  if (workers > 1 && !strategy->is_chief() && std::freopen("/dev/null", "w", stdout) == nullptr) {
    throw Internal("cannot silence the output of worker " + std::to_string(worker));
  }
  const std::optional<LatestCheckpoint> latest =
      latest_checkpoint(flags.model_dir, workers, worker);
  const int64_t restored = latest ? latest->step : 0;
  // A TPU takes only static shapes: every batch full, the partial last one dropped.
  const bool tpu = flags.strategy.rfind("tpu", 0) == 0;
  TrainData data =
      open_train_data(choice.data, DataOptions{.batch = choice.batch,
                                               .augment = choice.augment,
                                               .drop_remainder = tpu,
                                               .validation_split = choice.validation_split,
                                               .seed = choice.seed,
                                               .image_size = choice.image_size,
                                               .grayscale = choice.grayscale,
                                               .classes = choice.class_names,
                                               .num_workers = workers,
                                               .worker_index = worker,
                                               .verbose = true});
  const std::vector<int64_t> image_shape = {data.image_shape.dim(0), data.image_shape.dim(1),
                                            data.image_shape.dim(2)};
  if (resuming && !choice.image_shape.empty() && choice.image_shape != image_shape) {
    throw InvalidArgument(str_cat("--data ", choice.data, " now gives images of shape [",
                                  str_join(image_shape, ", "), "], but the model in ",
                                  flags.model_dir, " was built for [",
                                  str_join(choice.image_shape, ", "), "]"));
  }
  choice.image_shape = image_shape;
  choice.class_names = data.class_names;
  const int64_t steps_per_epoch = tpu ? data.train_examples / choice.batch
                                      : (data.train_examples + choice.batch - 1) / choice.batch;
  if (steps_per_epoch <= 0) {
    throw InvalidArgument(
        "--data " + data.name +
        (tpu ? " has fewer training examples than one --batch" : " has no training examples"));
  }
  // As TensorFlow: --steps N more steps (Estimator steps), --max-steps stops at that global step,
  // --epochs N epochs in total (Keras epochs with initial_epoch).
  const int64_t last_step = was_given(given, "--steps")       ? restored + flags.steps
                            : was_given(given, "--max-steps") ? flags.max_steps
                                                              : flags.epochs * steps_per_epoch;
  const int64_t epochs = (last_step + steps_per_epoch - 1) / steps_per_epoch;
  // The schedule is fixed by the first run, so a resumed one continues the same curve.
  if (!resuming || choice.decay_steps == 0) choice.decay_steps = last_step;

  RunConfig config;
  // Without --model-dir the run's checkpoints live in a temporary directory, removed at exit
  // (after the Estimator, declared below it, is gone) unless the user keeps it.
  std::optional<TemporaryModelDir> temporary;
  if (flags.model_dir.empty()) {
    temporary.emplace();
    if (flags.keep_model_dir) temporary->keep();
  }
  config.model_dir = temporary ? temporary->path() : flags.model_dir;
  config.tf_random_seed = choice.seed;
  config.save_checkpoints_steps =
      flags.save_checkpoints_steps > 0 ? flags.save_checkpoints_steps : steps_per_epoch;
  config.keep_checkpoint_max = 5;
  config.checkpoint_input_pipeline = true;
  config.steps_per_execution = flags.steps_per_execution;
  config.train_distribute = strategy;
  // The run's whole input; a checkpoint that saved its position continues it there exactly and
  // at once. Without one (an older checkpoint, another --epochs), the resumed
  // epoch's batches already trained on are read again and dropped: exact too, but slower.
  const std::optional<int64_t> static_batch =
      tpu ? std::optional<int64_t>(choice.batch) : std::nullopt;
  InputFn input = run_input(data, choice.seed, steps_per_epoch, epochs, 0, static_batch);
  bool input_restored = false;
  if (latest && latest->input_state) {
    input_restored = InputPipeline(input, config.input_options).restore_state(*latest->input_state);
  }
  if (!input_restored) {
    input = run_input(data, choice.seed, steps_per_epoch, epochs, restored, static_batch);
  }
  config.eval_distribute = config.train_distribute;
  // Layers take the policy when they are made: the Estimator's model and every replica's.
  set_global_policy(Policy(flags.mixed_precision));
  ModelSpec spec = make_model_spec(choice);
  Estimator estimator(std::move(spec), config);
  if (!config.train_distribute || config.train_distribute->is_chief()) {
    save_model_choice(estimator.model_dir(), choice);
  }

  std::printf(
      "Training %s on %s: %lld examples, batch %lld, %lld steps/epoch, %s lr %g (%s), "
      "model_dir %s\n",
      choice.model.c_str(), data.name.c_str(), static_cast<long long>(data.train_examples),
      static_cast<long long>(choice.batch), static_cast<long long>(steps_per_epoch),
      choice.optimizer.c_str(), effective_learning_rate(choice),
      choice.schedule == "cosine" || (choice.schedule == "auto" && choice.optimizer == "adam")
          ? "cosine decay"
          : "constant",
      estimator.model_dir().c_str());
  if (config.train_distribute) {
    std::printf("Distribution: %s, %d replica(s) in sync on %d thread(s)\n",
                std::string(config.train_distribute->name()).c_str(),
                config.train_distribute->num_replicas_in_sync(),
                config.train_distribute->num_threads());
  }
  if (!data.test) {
    std::printf(
        "No held-out split in %s: training only, no evaluation will be done (add a "
        "test/ folder beside train/, or give --validation-split F)\n",
        data.name.c_str());
  }
  if (restored > 0 && restored < last_step) {
    std::printf(
        "Resuming from model.ckpt-%lld: epoch %lld/%lld, step %lld of %lld in it (%s)\n",
        static_cast<long long>(restored), static_cast<long long>(restored / steps_per_epoch + 1),
        static_cast<long long>(epochs), static_cast<long long>(restored % steps_per_epoch + 1),
        static_cast<long long>(steps_per_epoch),
        input_restored ? "the input continues from its saved position"
                       : "the checkpoint holds no position of this input: the epoch's batches "
                         "before it are read again and dropped");
  } else if (restored >= last_step) {
    std::printf("Nothing to train: %s is at global step %lld, and this run ends at %lld\n",
                estimator.model_dir().c_str(), static_cast<long long>(restored),
                static_cast<long long>(last_step));
  }
  std::fflush(stdout);

  double train_seconds = 0, input_wait_seconds = 0, step_seconds = 0;
  int64_t examples = 0;
  std::unique_ptr<ProfilerHook> profiler;
  if (!flags.profile_dir.empty()) {
    profiler = std::make_unique<ProfilerHook>(
        ProfilerHookOptions{.save_steps = steps_per_epoch, .output_dir = flags.profile_dir});
  }
  if (restored < last_step) {
    EpochProgressHook progress(steps_per_epoch, restored, epochs, last_step,
                               {.interactive = progress_output_is_interactive(stdout)});
    TimeHistoryHook history;
    std::vector<SessionRunHook*> hooks{&progress, &history};
    if (profiler) hooks.push_back(profiler.get());
    estimator.train(input, hooks, std::nullopt, last_step);
    train_seconds = history.total_seconds();
    examples = history.examples();
    step_seconds =
        std::accumulate(history.step_seconds().begin(), history.step_seconds().end(), 0.0);
    input_wait_seconds = history.input_wait_seconds();
  }
  if (step_seconds > 0) {
    std::printf("input wait: %.1f%% of step time\n", 100.0 * input_wait_seconds / step_seconds);
  }
  if (profiler && !profiler->written().empty()) {
    std::printf("profile: %zu Chrome trace file(s) in %s (open in Perfetto or chrome://tracing)\n",
                profiler->written().size(), flags.profile_dir.c_str());
  }
  std::optional<EvalResult> test;
  if (data.test) {
    test = estimator.evaluate(data.test);
    std::printf("test (%s): loss %.4f - accuracy %.4f (global step %lld)\n",
                data.test_split.c_str(), test->at("loss"), test->at("accuracy"),
                static_cast<long long>(test->at("global_step")));
  }
  if (!flags.export_path.empty()) {
    save_weights(estimator.model(), flags.export_path);
    std::printf("weights exported to %s\n", flags.export_path.c_str());
  }
  std::printf("wall time %.1f s\n",
              std::chrono::duration<double>(Clock::now() - wall_start).count());

  Report report;
  report.add("epochs", static_cast<long long>(epochs));
  // Without training the model was not restored: the checkpoint's step is the global step.
  const int64_t global_step = restored < last_step ? estimator.global_step() : restored;
  report.add("steps", static_cast<long long>(global_step - restored));
  report.add("global_step", static_cast<long long>(global_step));
  report.add("train_seconds", train_seconds, 2);
  report.add("examples_per_sec", train_seconds > 0 ? double(examples) / train_seconds : 0.0, 0);
  if (test) {
    report.add("test_accuracy", test->at("accuracy"), 4);
    report.add("test_loss", test->at("loss"), 4);
  } else {
    report.add("test_accuracy", std::string("none"));
    report.add("test_loss", std::string("none"));
  }
  if (restored > 0) report.add("resumed_from", static_cast<long long>(restored));
  report.print(flags.json);
}

// The long names of the options the user gave on the command line.
std::vector<std::string> given_options(const CLI::App& cmd) {
  std::vector<std::string> given;
  for (const CLI::Option* option : cmd.get_options()) {
    if (option->count() > 0 && !option->get_lnames().empty()) {
      given.push_back("--" + option->get_lnames().front());
    }
  }
  return given;
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto flags = std::make_shared<TrainFlags>();
  CLI::App* cmd = app.add_subcommand(
      "train",
      "Train a model with the Estimator, then evaluate it on the test split "
      "(default: fashion-cnn-wide on Fashion-MNIST, Adam lr 0.004 with cosine decay, 5 epochs; "
      "the tutorial's model and recipe, SGD lr 0.01 momentum 0.5, is --model fashion-cnn "
      "--optimizer sgd)");
  cmd->add_option("--data", flags->choice.data,
                  "fashion-mnist; an image folder with one sub-folder per class, or with split "
                  "folders train/ and test/ (or val/, validation/) holding those; a zip or tar of "
                  "such a folder, read as the folder; or TFRecords of tf.train.Examples "
                  "(image/encoded, image/class/label) as `sluice records convert` writes them: a "
                  "file, a quoted glob such as 'data/train-*', or TRAIN_GLOB,TEST_GLOB (without "
                  "a test glob, the train glob with 'train' replaced by 'test')")
      ->capture_default_str();
  cmd->add_option("--validation-split", flags->choice.validation_split,
                  "for data without a held-out split: hold out this share of the training files "
                  "(chosen by a seeded hash of their names) and evaluate on it; without it such "
                  "data is trained on and not evaluated");
  cmd->add_option("--image-size", flags->choice.image_size,
                  "resize every image to NxN (default: the images' own size, which must be the "
                  "same for all)");
  cmd->add_flag("--grayscale", flags->choice.grayscale,
                "read images with 1 channel (default: 1 when the first image is grey, else 3)");
  cmd->add_option("--model", flags->choice.model,
                  str_cat("a preset (", str_join(preset_names(), ", "),
                          "; built for the data's image size and classes) or a Keras JSON file"))
      ->capture_default_str();
  cmd->add_option("--epochs", flags->epochs,
                  "epochs in total, counting those a resumed model_dir already trained (Keras' "
                  "epochs with initial_epoch)")
      ->capture_default_str();
  cmd->add_option("--steps", flags->steps,
                  "train this many more steps than the model_dir's checkpoint has (the "
                  "Estimator's steps), instead of --epochs");
  cmd->add_option("--max-steps", flags->max_steps,
                  "train until this global step (the Estimator's max_steps), instead of --epochs");
  cmd->add_option("--save-checkpoints-steps", flags->save_checkpoints_steps,
                  "write a checkpoint (weights, optimizer, global step) every N steps "
                  "(RunConfig's save_checkpoints_steps; default: at the end of every epoch); a "
                  "killed run started again with the same command resumes exactly from the "
                  "latest one");
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
                  "checkpoint (default: a new temporary directory, removed at exit unless "
                  "--keep-model-dir)");
  cmd->add_flag("--keep-model-dir", flags->keep_model_dir,
                "without --model-dir: keep the temporary model_dir (its path is printed) instead "
                "of removing it at exit");
  cmd->add_option("--seed", flags->seed, "seed of initialisation and shuffling")
      ->capture_default_str();
  cmd->add_option("--threads", flags->threads,
                  "the whole process's thread budget: input pipeline, model and replicas "
                  "(default: all cores)");
  cmd->add_option("--strategy", flags->strategy,
                  "distribution strategy: one | mirrored[:N] (N replicas sharing --threads, "
                  "default 2; each global --batch is split across them) | multiworker[:N] (one "
                  "worker per process under mpirun, N replicas each, default 1; every worker reads "
                  "and decodes only its share of each global batch; only worker 0 writes "
                  "checkpoints and prints) | tpu[:N] (TPUStrategy: N simulated TPU cores, default "
                  "8, on --threads; batches are static: a partial last one is dropped); default: "
                  "none");
  cmd->add_option("--mixed-precision", flags->mixed_precision,
                  "float32 | mixed_bfloat16 (Keras' policy, the TPU's numerics: bfloat16 "
                  "activations and matrix-product inputs, float32 accumulation and weights)")
      ->capture_default_str();
  cmd->add_option("--steps-per-execution", flags->steps_per_execution,
                  "training steps per execution (Keras' steps_per_execution): hooks and the "
                  "progress bar see one update per K steps")
      ->capture_default_str();
  cmd->add_option("--worker-timeout", flags->worker_timeout,
                  "multiworker: seconds a worker waits for the others in a collective before it "
                  "fails naming the missing worker")
      ->capture_default_str();
  cmd->add_option("--export", flags->export_path, "write the trained weights as Keras HDF5");
  cmd->add_option("--profile", flags->profile_dir,
                  "write Chrome traces of the train steps and input pipeline stages here: "
                  "timeline-<N>.json, N the global step each ends at, for the first step alone "
                  "(with the pipeline's start-up), then one per epoch's worth of steps, and the "
                  "rest at the end");
  cmd->add_flag("--augment", flags->choice.augment,
                "augment training images as Keras' ImageDataGenerator(shear_range=0.2, "
                "zoom_range=0.2, horizontal_flip=True)");
  cmd->add_flag("--json", flags->json, "print the last line as one JSON object");
  cmd->callback([flags, cmd] { run_train(*flags, given_options(*cmd)); });
}

}  // namespace sluice::app
