// A Keras model as an Estimator under MirroredStrategy, as TensorFlow's "Multi-GPU training with
// Estimator, tf.keras and tf.data" tutorial: the estimator-convnet is compiled and wrapped into an
// Estimator (model_to_estimator) whose RunConfig distributes training over N replicas; a
// TimeHistory hook times every step; the run is repeated for each replica count to compare total
// time and images/s, and the last model is evaluated on the test set.
//
//   estimator_mirrored --replicas 1,2 --batch 64 --steps 200
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "apps/examples/run_example.h"
#include "sluice/core/threads.h"
#include "sluice/dataset/dataset.h"
#include "sluice/dataset/idx_dataset.h"
#include "sluice/estimator/basic_session_run_hooks.h"
#include "sluice/estimator/estimator.h"
#include "sluice/model/presets.h"
#include "sluice/ops/convert.h"
#include "sluice/strategy/mirrored_strategy.h"

using namespace sluice;

struct Flags {
  std::string data{kFashionMnistDir};
  std::vector<int> replicas = {1, 2};
  int64_t batch = 64;  // Per replica, as the tutorial's BATCH_SIZE per GPU.
  int64_t steps = 200;
  int threads = 0;
  std::string model_dir;  // Empty: a fresh temporary directory per replica count.
  uint64_t seed = 0;
};

// input_fn(images, labels, epochs, batch_size) of the tutorial: pixels scaled to [0, 1],
// shuffled, repeated, batched.
Dataset input_fn(const std::string& dir, const std::string& split, int64_t epochs,
                 int64_t batch_size) {
  Dataset dataset = fashion_mnist(split, dir).map([](Element e) {
    e["image"] = convert_image_dtype(e["image"], DType::kFloat32);
    return e;
  });
  if (split == "train") dataset = dataset.shuffle(1000, /*seed=*/0).repeat(epochs);
  return dataset.batch(batch_size).prefetch(kAutotune);
}

// model = the tutorial's convnet; model.compile(loss=..., optimizer=Adam(), metrics=['accuracy'])
// then tf.keras.estimator.model_to_estimator(model, config=config).
std::unique_ptr<Estimator> model_to_estimator(const RunConfig& config, uint64_t seed) {
  ModelSpec spec{make_preset("estimator-convnet", seed),
                 Loss("sparse_categorical_crossentropy"),
                 std::make_unique<Adam>(),
                 {"accuracy"}};
  // Under a strategy every replica builds the same architecture; its weights come from the first.
  spec.model_fn = [seed] { return make_preset("estimator-convnet", seed); };
  return std::make_unique<Estimator>(std::move(spec), config);
}

void run(const Flags& flags) {
  std::unique_ptr<Estimator> estimator;
  std::vector<double> images_per_sec;
  for (int replicas : flags.replicas) {
    // strategy = tf.distribute.MirroredStrategy(); config = RunConfig(train_distribute=strategy)
    RunConfig config{.tf_random_seed = flags.seed};
    if (!flags.model_dir.empty()) {
      config.model_dir = flags.model_dir + "/replicas_" + std::to_string(replicas);
    }
    config.train_distribute = std::make_shared<MirroredStrategy>(replicas, flags.threads);
    config.eval_distribute = config.train_distribute;
    estimator = model_to_estimator(config, flags.seed);

    // The input_fn yields GLOBAL batches (batch × replicas); each is split across the replicas.
    const int64_t global_batch = flags.batch * replicas;
    TimeHistoryHook time_hist;
    estimator->train([&] { return input_fn(flags.data, "train", -1, global_batch); }, {&time_hist},
                     flags.steps);
    const double per_second = time_hist.examples_per_second();
    images_per_sec.push_back(per_second);
    std::printf("%d replica(s): %lld steps of %lld images, total time %.2f s, %.0f images/s\n",
                replicas, static_cast<long long>(time_hist.step_seconds().size()),
                static_cast<long long>(global_batch), time_hist.total_seconds(), per_second);
  }

  const EvalResult result =
      estimator->evaluate([&] { return input_fn(flags.data, "test", 1, flags.batch); });
  std::printf("evaluate: accuracy %.4f, loss %.4f, global step %lld\n", result.at("accuracy"),
              result.at("loss"), static_cast<long long>(result.at("global_step")));
  std::string line;
  for (size_t i = 0; i < flags.replicas.size(); ++i) {
    char field[64];
    std::snprintf(field, sizeof(field), "images_per_sec_%d=%.0f ", flags.replicas[i],
                  images_per_sec[i]);
    line += field;
  }
  std::printf("%saccuracy=%.4f loss=%.4f\n", line.c_str(), result.at("accuracy"),
              result.at("loss"));
}

int main(int argc, char** argv) {
  // The process's thread budget (all cores): what its pipelines and strategies take. This thread
  // trains, so it is one of them.
  const sluice::ThreadBudget budget(0, sluice::ThreadBudget::Caller::kComputes);
  Flags flags;
  CLI::App app{"model_to_estimator + MirroredStrategy + TimeHistory, per replica count"};
  app.option_defaults()->always_capture_default();
  app.add_option("--data", flags.data, "folder of the Fashion-MNIST IDX files (.gz)");
  app.add_option("--replicas", flags.replicas, "replica counts to compare")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option("--batch", flags.batch, "batch size per replica")->check(CLI::PositiveNumber);
  app.add_option("--steps", flags.steps, "training steps per replica count")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", flags.threads, "thread budget of the strategy (0: all cores)");
  app.add_option("--model-dir", flags.model_dir,
                 "checkpoints go to DIR/replicas_N (default: a temporary directory)");
  app.add_option("--seed", flags.seed, "seed of the weights");
  CLI11_PARSE(app, argc, argv);
  return sluice::examples::run_example([&] { run(flags); });
}
