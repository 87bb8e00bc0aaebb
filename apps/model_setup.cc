#include "apps/model_setup.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/errors.h"
#include "estimator/checkpoint.h"
#include "model/keras_json.h"
#include "model/presets.h"

namespace sluice::app {
namespace {

constexpr const char* kChoiceFile = "sluice_model.json";

bool is_preset(const std::string& name) {
  for (const auto& p : preset_names()) {
    if (p == name) return true;
  }
  return false;
}

}  // namespace

double effective_learning_rate(const ModelChoice& choice) {
  if (choice.learning_rate > 0) return choice.learning_rate;
  if (choice.optimizer == "adam") return 0.004;
  return choice.optimizer == "sgd" ? 0.01 : 0.001;
}

ModelSpec make_model_spec(const ModelChoice& choice) {
  const float rate = static_cast<float>(effective_learning_rate(choice));
  LearningRate lr = rate;
  const bool cosine =
      choice.schedule == "cosine" || (choice.schedule == "auto" && choice.optimizer == "adam");
  if (cosine) {
    if (choice.decay_steps > 0) lr = cosine_decay(rate, choice.decay_steps);
  } else if (choice.schedule != "constant" && choice.schedule != "auto") {
    throw InvalidArgument("--schedule " + choice.schedule + ": expected auto, constant or cosine");
  }
  std::unique_ptr<Optimizer> optimizer;
  if (choice.optimizer == "sgd") {
    optimizer = std::make_unique<SGD>(
        SGDOptions{.learning_rate = lr, .momentum = static_cast<float>(choice.momentum)});
  } else if (choice.optimizer == "adam") {
    optimizer = std::make_unique<Adam>(AdamOptions{.learning_rate = lr});
  } else if (choice.optimizer == "rmsprop") {
    optimizer = std::make_unique<RMSprop>(RMSpropOptions{.learning_rate = lr});
  } else {
    throw InvalidArgument("--optimizer " + choice.optimizer + ": expected sgd, adam or rmsprop");
  }
  if (is_preset(choice.model)) {
    ModelSpec spec{make_preset(choice.model, choice.seed),
                   Loss(preset_loss_name(choice.model), preset_from_logits(choice.model)),
                   std::move(optimizer),
                   {"accuracy"}};
    // Replicas of a distribution strategy are built the same way.
    spec.model_fn = [name = choice.model, seed = choice.seed] { return make_preset(name, seed); };
    return spec;
  }
  std::ifstream in(choice.model);
  if (!in) {
    std::string known;
    for (const auto& p : preset_names()) known += (known.empty() ? "" : ", ") + p;
    throw NotFound("--model " + choice.model + " is neither a preset (" + known +
                   ") nor a readable Keras JSON file");
  }
  std::ostringstream json;
  json << in.rdbuf();
  Sequential model = model_from_json(json.str(), choice.seed);
  if (!model.built()) {
    throw InvalidArgument("--model " + choice.model +
                          ": the Keras JSON gives no input shape (add batch_input_shape)");
  }
  ModelSpec spec{std::move(model),
                 Loss("sparse_categorical_crossentropy"),
                 std::move(optimizer),
                 {"accuracy"}};
  spec.model_fn = [document = json.str(), seed = choice.seed] {
    return model_from_json(document, seed);
  };
  return spec;
}

void save_model_choice(const std::string& model_dir, const ModelChoice& choice) {
  std::filesystem::create_directories(model_dir);
  // A JSON model is referred to by absolute path so evaluate works from another directory.
  const std::string model =
      is_preset(choice.model) ? choice.model : std::filesystem::absolute(choice.model).string();
  const nlohmann::json j = {{"model", model},
                            {"optimizer", choice.optimizer},
                            {"learning_rate", choice.learning_rate},
                            {"momentum", choice.momentum},
                            {"seed", choice.seed},
                            {"schedule", choice.schedule},
                            {"decay_steps", choice.decay_steps},
                            {"data", choice.data},
                            {"batch", choice.batch}};
  write_file_atomically((std::filesystem::path(model_dir) / kChoiceFile).string(),
                        j.dump(2) + "\n");
}

ModelChoice load_model_choice(const std::string& model_dir) {
  const std::string path = (std::filesystem::path(model_dir) / kChoiceFile).string();
  std::ifstream in(path);
  if (!in) {
    throw NotFound("no " + std::string(kChoiceFile) + " in --model-dir " + model_dir +
                   ": train a model into it first with `sluice train --model-dir " + model_dir +
                   "`");
  }
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    ModelChoice c;
    c.model = j.at("model").get<std::string>();
    c.optimizer = j.at("optimizer").get<std::string>();
    c.learning_rate = j.at("learning_rate").get<double>();
    c.momentum = j.at("momentum").get<double>();
    c.seed = j.at("seed").get<uint64_t>();
    c.schedule = j.at("schedule").get<std::string>();
    c.decay_steps = j.at("decay_steps").get<int64_t>();
    c.data = j.at("data").get<std::string>();
    c.batch = j.at("batch").get<int64_t>();
    return c;
  } catch (const nlohmann::json::exception& e) {
    throw DataLoss(path + " is not a valid model description: " + e.what());
  }
}

}  // namespace sluice::app
