// The model side of `sluice train / evaluate / predict`: the model, loss and optimizer the flags
// choose, and the small description train writes into model_dir so evaluate and predict rebuild
// the same architecture around its checkpoints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/train_data.h"
#include "sluice/estimator/estimator.h"

namespace sluice::app {

struct ModelChoice {
  // A preset name or a Keras JSON file. The default passes 0.91 on Fashion-MNIST in 5 epochs,
  // which the tutorial's fashion-cnn does not reach reliably however long it trains.
  std::string model = "fashion-cnn-wide";
  std::string optimizer = "adam";  // sgd | adam | rmsprop
  // 0: the optimizer's default: adam 0.004 (measured best for 5 epochs of fashion-cnn-wide, and
  // for 3 of fashion-cnn, with the cosine schedule), sgd 0.01 (the tutorial's), rmsprop 0.001.
  double learning_rate = 0;
  double momentum = 0.5;  // SGD only.
  // "constant", "cosine" (decay from the rate to 0 over decay_steps, the whole run, which reaches
  // a better optimum than a constant rate in the same few epochs), or "auto": cosine for adam,
  // constant otherwise, so `--model fashion-cnn --optimizer sgd` is the tutorial's recipe.
  std::string schedule = "auto";
  int64_t decay_steps = 0;  // Set by train from its step count; 0 with "cosine" means constant.
  uint64_t seed = 0;
  std::string data = "fashion-mnist";
  int64_t batch = 128;
  // How the data is read: held-out share, resize, channels, augmentation.
  double validation_split = 0;
  int64_t image_size = 0;
  bool grayscale = false;
  bool augment = false;
  // What the model is built for, found from the data by train: [height, width, channels] and
  // the class names by label (Keras' class_indices); evaluate and predict map data onto them.
  std::vector<int64_t> image_shape;
  std::vector<std::string> class_names;
};

// A --data (or --model file) that names an existing file or folder as an absolute path, so that a
// resumed run, an evaluate from another directory, and the input's saved position (whose plan
// holds the paths it reads) all see the same data; anything else unchanged.
std::string absolute_data(const std::string& data);

// The --flags that set each ModelChoice field a run keeps in model_dir: a resumed run takes the
// kept value where the flag is not given, and a given flag that differs is an error naming both.
// `given` holds the flag names the user gave ("--batch", ...).
ModelChoice resume_choice(const ModelChoice& kept, const ModelChoice& flags,
                          const std::vector<std::string>& given, const std::string& model_dir);

// The learning rate in force (the default of the optimizer when learning_rate is 0).
double effective_learning_rate(const ModelChoice& choice);

// Builds the spec: a preset with its loss, or a Keras JSON model (trained with
// sparse_categorical_crossentropy on its probabilities), with metric "accuracy".
// Throws InvalidArgument for an unknown schedule too.
// Throws InvalidArgument for an unknown optimizer, the errors of make_preset / model_from_json.
ModelSpec make_model_spec(const ModelChoice& choice);

// model_dir/sluice_model.json, written atomically; read back by load_model_choice (NotFound when
// missing, naming the directory and saying to train first). has_model_choice: whether it exists.
void save_model_choice(const std::string& model_dir, const ModelChoice& choice);
ModelChoice load_model_choice(const std::string& model_dir);
bool has_model_choice(const std::string& model_dir);

// The data `evaluate` and `predict` read: with `data_flag`, that data, all held out unless it has
// a test split of its own; without, the held-out split the training run used. Classes map onto
// the model's by name. Throws InvalidArgument when there is no held-out split, NotFound when
// model_dir has no checkpoint (naming `verb`, e.g. "evaluate").
TrainData open_evaluation_data(const ModelChoice& choice, const std::string& data_flag,
                               const std::string& model_dir, const std::string& verb);

// What the newest readable checkpoint in a model_dir holds for the commands: its global step and
// the input position it saved for this worker (saved_input_position), read with one pass over it.
struct LatestCheckpoint {
  int64_t step = 0;
  std::optional<std::string> input_state;
};
// nullopt when model_dir has no readable checkpoint. Throws FailedPrecondition naming the
// checkpoint when another number of workers saved its input positions.
std::optional<LatestCheckpoint> latest_checkpoint(const std::string& model_dir, int num_workers = 1,
                                                  int worker_index = 0);

}  // namespace sluice::app
