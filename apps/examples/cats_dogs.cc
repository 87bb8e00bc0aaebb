// Cats vs dogs from a zip of class folders, as the Colab TPU tutorial: Keras'
// ImageDataGenerator augmentation (rescale, shear, zoom, horizontal flip) reading the zip in
// place, the tutorial's CNN under TPUStrategy, fit for N epochs with the validation
// accuracy after each, then model.save_weights("weights.h5").
//
//   cats_dogs --data cats_and_dogs.zip --epochs 25 --weights weights.h5
//
// The zip holds dataset/training_set/{cats,dogs}/*.jpg and dataset/test_set/{cats,dogs}/*.jpg.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>

#include "apps/examples/run_example.h"
#include "sluice/core/errors.h"
#include "sluice/core/threads.h"
#include "sluice/dataset/image_data_generator.h"
#include "sluice/estimator/basic_session_run_hooks.h"
#include "sluice/estimator/estimator.h"
#include "sluice/estimator/progress_hook.h"
#include "sluice/model/keras_weights.h"
#include "sluice/model/presets.h"
#include "sluice/strategy/tpu_cluster_resolver.h"
#include "sluice/strategy/tpu_strategy.h"

using namespace sluice;

struct Flags {
  std::string data = "cats_and_dogs.zip";
  std::string train_subpath = "dataset/training_set";
  std::string test_subpath = "dataset/test_set";
  int64_t epochs = 25;
  int64_t batch = 32;
  std::string tpu;  // TPUClusterResolver address: "" (TPU_NAME, else local), "local:N", ...
  std::string model_dir;
  std::string weights = "weights.h5";
  uint64_t seed = 0;
};

void run(const Flags& flags) {
  if (flags.data == Flags().data && !std::filesystem::exists(flags.data)) {
    throw NotFound(
        "no data set at " + flags.data + " (--data): give a zip or folder holding " +
        flags.train_subpath + "/{cats,dogs}/*.jpg and " + flags.test_subpath +
        "/{cats,dogs}/*.jpg, as the tutorial's cats_and_dogs.zip does. TensorFlow's "
        "cats_and_dogs_filtered.zip (storage.googleapis.com/mledu-datasets/"
        "cats_and_dogs_filtered.zip) works with --train-subpath cats_and_dogs_filtered/train "
        "--test-subpath cats_and_dogs_filtered/validation");
  }
  // train_datagen = ImageDataGenerator(rescale=1./255, shear_range=0.2, zoom_range=0.2,
  //                                    horizontal_flip=True)
  const ImageDataGenerator train_datagen = image_data_generator(
      {.rescale = 1 / 255.f, .shear_range = 0.2, .zoom_range = 0.2, .horizontal_flip = true});
  const ImageDataGenerator test_datagen = image_data_generator({.rescale = 1 / 255.f});
  // flow_from_directory reads the class folders straight out of the zip: nothing is extracted.
  const FlowFromDirectoryOptions flow{.target_size = {128, 128},
                                      .batch_size = flags.batch,
                                      .class_mode = ClassMode::kBinary,
                                      .seed = flags.seed};
  const DirectoryFlow training_set =
      train_datagen.flow_from_directory(flags.data + "/" + flags.train_subpath, flow);
  FlowFromDirectoryOptions test_flow = flow;
  test_flow.shuffle = false;
  const DirectoryFlow test_set =
      test_datagen.flow_from_directory(flags.data + "/" + flags.test_subpath, test_flow);

  // tpu = TPUClusterResolver(); strategy = TPUStrategy(tpu). No TPU is attached to a sluice
  // host: the resolved system's cores (8 by default, "local:N" for N) run as replicas on the CPU,
  // with a TPU's rules — static batch shapes, a global batch divisible by the core count.
  const TPUClusterResolver tpu(flags.tpu);
  auto strategy = std::make_shared<TPUStrategy>(tpu);
  std::printf("Distribution: %s, %d replicas in sync\n", std::string(strategy->name()).c_str(),
              strategy->num_replicas_in_sync());
  // flow_from_directory's last batch of an epoch may be short; a TPU compiles one static shape,
  // so the training batches are re-made with drop_remainder=true (the partial batch is dropped).
  const Dataset train_batches =
      training_set.dataset.unbatch().batch(flags.batch, /*drop_remainder=*/true);

  // model.compile(optimizer='adam', loss='binary_crossentropy', metrics=['accuracy']), with the
  // model built once per replica under the strategy.
  ModelSpec spec{make_preset("cats-dogs-cnn", flags.seed),
                 Loss("binary_crossentropy"),
                 std::make_unique<Adam>(),
                 {"accuracy"}};
  spec.model_fn = [seed = flags.seed] { return make_preset("cats-dogs-cnn", seed); };
  RunConfig config{.model_dir = flags.model_dir, .tf_random_seed = flags.seed};
  config.save_checkpoints_steps = 0;  // fit() keeps the weights in memory; we save them below.
  config.save_checkpoints_secs = 0;
  config.train_distribute = strategy;
  Estimator model(std::move(spec), config);

  // model.fit(training_set, epochs=N, validation_data=test_set)
  const int64_t steps_per_epoch = training_set.samples / flags.batch;
  EvalResult validation;
  for (int64_t epoch = 1; epoch <= flags.epochs; ++epoch) {
    ProgressBarHook progress(
        {.title = "Epoch " + std::to_string(epoch) + "/" + std::to_string(flags.epochs),
         .target_steps = steps_per_epoch,
         .interactive = progress_output_is_interactive(stdout)});
    model.train([&] { return train_batches; }, {&progress});
    validation = model.evaluate([&] { return test_set.dataset; });
    std::printf("val_loss: %.4f - val_accuracy: %.4f\n", validation.at("loss"),
                validation.at("accuracy"));
  }

  // model.save_weights('weights.h5'): Keras' HDF5 layout, loadable by Keras itself.
  save_weights(model.model(), flags.weights);
  std::printf("weights saved to %s\n", flags.weights.c_str());
  std::printf("epochs=%lld steps=%lld val_accuracy=%.4f val_loss=%.4f\n",
              static_cast<long long>(flags.epochs), static_cast<long long>(model.global_step()),
              validation.at("accuracy"), validation.at("loss"));
}

int main(int argc, char** argv) {
  // The process's thread budget (all cores): what its pipelines and strategies take. This thread
  // trains, so it is one of them.
  const sluice::ThreadBudget budget(0, sluice::ThreadBudget::Caller::kComputes);
  Flags flags;
  CLI::App app{
      "Cats vs dogs: ImageDataGenerator on a zip, cats-dogs-cnn under a strategy, "
      "save_weights"};
  app.option_defaults()->always_capture_default();
  app.add_option("--data", flags.data, "zip (or folder) of the data set");
  app.add_option("--train-subpath", flags.train_subpath, "folder of the training class folders");
  app.add_option("--test-subpath", flags.test_subpath, "folder of the test class folders");
  app.add_option("--epochs", flags.epochs, "epochs to fit")->check(CLI::PositiveNumber);
  app.add_option("--batch", flags.batch, "global batch size")->check(CLI::PositiveNumber);
  app.add_option("--tpu", flags.tpu, "TPU address: local, local:N (N cores), grpc://...");
  app.add_option("--model-dir", flags.model_dir, "the Estimator's directory (default: a temp dir)");
  app.add_option("--weights", flags.weights, "where to save the Keras HDF5 weights");
  app.add_option("--seed", flags.seed, "seed of the weights, shuffles and augmentation");
  CLI11_PARSE(app, argc, argv);
  return sluice::examples::run_example([&] { run(flags); });
}
