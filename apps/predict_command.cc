// `sluice predict`: predicts the test split with the latest checkpoint of a model_dir, prints and
// draws the tutorials' result plot — a 5×5 grid of test images sampled across the classes, each
// titled with its predicted class and confidence over its actual class, framed blue when right
// and red when wrong — and can write every prediction to a CSV file.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/class_balanced_sample.h"
#include "apps/class_names.h"
#include "apps/commands.h"
#include "apps/model_setup.h"
#include "apps/prediction_confidence.h"
#include "apps/prediction_csv.h"
#include "apps/prediction_grid.h"
#include "apps/report.h"
#include "apps/train_data.h"
#include "sluice/core/errors.h"
#include "sluice/core/threads.h"
#include "sluice/estimator/estimator.h"

namespace sluice::app {
namespace {

struct PredictFlags {
  std::string model_dir;
  std::string data;
  std::string grid;
  std::string output;
  uint64_t seed = 0;
  int threads = 0;
  bool json = false;
};

void run_predict(const PredictFlags& flags) {
  // This thread runs the model's forward passes, so it is one of the budget's threads.
  const ThreadBudget budget(flags.threads, ThreadBudget::Caller::kComputes);
  ModelChoice choice = load_model_choice(flags.model_dir);
  const TrainData data = open_evaluation_data(choice, flags.data, flags.model_dir, "predict");
  RunConfig config;
  config.model_dir = flags.model_dir;
  ModelSpec spec = make_model_spec(choice);
  const Loss loss = spec.loss;
  Estimator estimator(std::move(spec), config);
  Predictions predictions = estimator.predict(data.test);

  // The grid's cells: spread over the classes (by label, or by prediction for unlabelled data).
  constexpr int kCells = PredictionGrid::kSize * PredictionGrid::kSize;
  ClassBalancedSample<Prediction> sample(kCells, flags.seed);
  std::optional<PredictionCsv> csv;
  if (!flags.output.empty()) csv.emplace(data.class_names);
  int64_t images = 0, labelled = 0, correct = 0;
  while (auto p = predictions.next()) {
    const int64_t index = images++;
    // A prediction's tensors are views of its whole batch: a kept one gets copies of its own.
    sample.offer(index, p->label.value_or(p->class_id), [&] {
      Prediction copy = *p;
      copy.output = p->output.clone();
      copy.features = p->features.clone();
      return copy;
    });
    if (csv) csv->add(index, *p, prediction_confidence(*p, loss));
    if (p->label) {
      ++labelled;
      correct += *p->label == p->class_id;
    }
  }

  PredictionGrid grid(data.class_names);
  for (const auto& [index, p] : sample.picks()) {
    const double confidence = prediction_confidence(p, loss);
    std::printf("%d: example %lld, actual %s, predicted %s (%.0f%%)\n", grid.cells(),
                static_cast<long long>(index),
                p.label ? class_name(data.class_names, *p.label).c_str() : "?",
                class_name(data.class_names, p.class_id).c_str(), 100.0 * confidence);
    grid.add(p, confidence);
  }
  if (!flags.grid.empty()) {
    grid.write_png(flags.grid);
    std::printf(
        "grid of %d test images across the classes (--seed %llu) written to %s (titles: "
        "predicted and confidence over (actual); blue right, red wrong)\n",
        grid.cells(), static_cast<unsigned long long>(flags.seed), flags.grid.c_str());
  }
  if (csv) {
    csv->write(flags.output);
    std::printf("%lld predictions written to %s\n", static_cast<long long>(csv->rows()),
                flags.output.c_str());
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
      "Predict the test split with the latest checkpoint of a model_dir; print 25 predictions "
      "sampled across the classes, draw them as a 5x5 grid, write all of them to a CSV file");
  cmd->add_option("--model-dir", flags->model_dir, "the directory train wrote")->required();
  cmd->add_option("--data", flags->data,
                  "data to predict (default: the training data's test split)");
  cmd->add_option("--grid", flags->grid,
                  "write the 5x5 grid here as a PNG: each image titled with its predicted class "
                  "and confidence over (its actual class), framed blue when right, red when "
                  "wrong");
  cmd->add_option("--seed", flags->seed,
                  "seed of the 25 images' choice: round-robin over the classes, a seeded random "
                  "choice within each")
      ->capture_default_str();
  cmd->add_option("--output", flags->output,
                  "write every prediction to this CSV file, with the header "
                  "index,label,label_name,predicted,predicted_name,confidence");
  cmd->add_option("--threads", flags->threads, "thread budget (default: all cores)");
  cmd->add_flag("--json", flags->json, "print the last line as one JSON object");
  cmd->callback([flags] { run_predict(*flags); });
}

}  // namespace sluice::app
