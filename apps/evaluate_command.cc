// `sluice evaluate`: evaluates the latest checkpoint of a model_dir written by `sluice train`.
#include <cstdio>
#include <memory>
#include <string>

#include "apps/commands.h"
#include "apps/model_setup.h"
#include "apps/report.h"
#include "apps/train_data.h"
#include "sluice/core/errors.h"
#include "sluice/core/threads.h"
#include "sluice/estimator/estimator.h"

namespace sluice::app {
namespace {

struct EvaluateFlags {
  std::string model_dir;
  std::string data;  // Empty: the data the model was trained on.
  int64_t batch = 0;
  int threads = 0;
  bool json = false;
};

void run_evaluate(const EvaluateFlags& flags) {
  const ThreadBudget budget(flags.threads, ThreadBudget::Caller::kComputes);
  ModelChoice choice = load_model_choice(flags.model_dir);
  if (flags.batch > 0) choice.batch = flags.batch;
  const TrainData data = open_evaluation_data(choice, flags.data, flags.model_dir, "evaluate");
  RunConfig config;
  config.model_dir = flags.model_dir;
  Estimator estimator(make_model_spec(choice), config);
  std::printf("Evaluating %s from %s on %s of %s (%lld examples)\n", choice.model.c_str(),
              flags.model_dir.c_str(), data.test_split.c_str(), data.name.c_str(),
              static_cast<long long>(data.test_examples));
  const EvalResult result = estimator.evaluate(data.test);
  Report report;
  report.add("global_step", static_cast<long long>(result.at("global_step")));
  report.add("accuracy", result.at("accuracy"), 4);
  report.add("loss", result.at("loss"), 4);
  report.print(flags.json);
}

}  // namespace

void add_evaluate_command(CLI::App& app) {
  auto flags = std::make_shared<EvaluateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "evaluate", "Evaluate the latest checkpoint of a model_dir written by `sluice train`");
  cmd->add_option("--model-dir", flags->model_dir, "the directory train wrote")->required();
  cmd->add_option("--data", flags->data,
                  "data to evaluate on (default: the training data's test split)");
  cmd->add_option("--batch", flags->batch, "batch size (default: the training batch)");
  cmd->add_option("--threads", flags->threads, "thread budget (default: all cores)");
  cmd->add_flag("--json", flags->json, "print the last line as one JSON object");
  cmd->callback([flags] { run_evaluate(*flags); });
}

}  // namespace sluice::app
