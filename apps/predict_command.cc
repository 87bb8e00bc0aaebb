// `sluice predict`: predicts the test split with the latest checkpoint of a model_dir and draws
// the tutorials' result plot: a 5×5 grid of test images, each titled "actual/predicted" class
// ids, framed blue when right and red when wrong.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "apps/model_setup.h"
#include "apps/prediction_grid.h"
#include "apps/report.h"
#include "apps/train_data.h"
#include "core/errors.h"
#include "estimator/estimator.h"

namespace sluice::app {
namespace {

struct PredictFlags {
  std::string model_dir;
  std::string data;
  std::string grid;
  bool json = false;
};

void run_predict(const PredictFlags& flags) {
  ModelChoice choice = load_model_choice(flags.model_dir);
  if (!flags.data.empty()) choice.data = flags.data;
  const TrainData data = open_train_data(
      choice.data,
      DataOptions{.batch = choice.batch,
                  .validation_split = flags.data.empty() ? choice.validation_split : 0.0,
                  .seed = choice.seed,
                  .image_size = choice.image_size,
                  .grayscale = choice.grayscale,
                  .classes = choice.class_names,
                  .all_held_out = !flags.data.empty()});
  if (!data.test) {
    throw InvalidArgument("--model-dir " + flags.model_dir + " was trained on " + choice.data +
                          ", which has no held-out split; give --data to predict");
  }
  if (!latest_checkpoint_step(flags.model_dir)) {
    throw NotFound("no checkpoint in --model-dir " + flags.model_dir +
                   ": nothing to predict with (train into it first)");
  }
  RunConfig config;
  config.model_dir = flags.model_dir;
  Estimator estimator(make_model_spec(choice), config);
  Predictions predictions = estimator.predict(data.test);
  PredictionGrid grid;
  int64_t images = 0, labelled = 0, correct = 0;
  while (auto p = predictions.next()) {
    if (grid.add(*p)) {
      auto name = [&](int64_t id) {
        return id >= 0 && id < static_cast<int64_t>(data.class_names.size())
                   ? data.class_names[static_cast<size_t>(id)]
                   : std::to_string(id);
      };
      std::printf("%lld: actual %s, predicted %s\n", static_cast<long long>(images),
                  p->label ? name(*p->label).c_str() : "?", name(p->class_id).c_str());
    }
    ++images;
    if (p->label) {
      ++labelled;
      correct += *p->label == p->class_id;
    }
  }
  if (!flags.grid.empty()) {
    grid.write_png(flags.grid);
    std::printf(
        "grid of the first %d test images written to %s (titles: actual/predicted; "
        "blue right, red wrong)\n",
        grid.cells(), flags.grid.c_str());
  }
  Report report;
  report.add("images", static_cast<long long>(images));
  report.add("accuracy", labelled > 0 ? double(correct) / double(labelled) : 0.0, 4);
  report.print(flags.json);
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto flags = std::make_shared<PredictFlags>();
  CLI::App* cmd = app.add_subcommand(
      "predict",
      "Predict the test split with the latest checkpoint of a model_dir and draw a "
      "5x5 grid of results");
  cmd->add_option("--model-dir", flags->model_dir, "the directory train wrote")->required();
  cmd->add_option("--data", flags->data,
                  "data to predict (default: the training data's test split)");
  cmd->add_option("--grid", flags->grid, "write the 5x5 PNG grid here");
  cmd->add_flag("--json", flags->json, "print the last line as one JSON object");
  cmd->callback([flags] { run_predict(*flags); });
}

}  // namespace sluice::app
