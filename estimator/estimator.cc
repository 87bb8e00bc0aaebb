#include "estimator/estimator.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "core/errors.h"
#include "estimator/basic_session_run_hooks.h"
#include "estimator/replicated_model.h"
#include "estimator/training_hooks.h"
#include "formats/event_file_writer.h"
#include "model/layer.h"
#include "strategy/one_device_strategy.h"
#include "strategy/strategy.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The global L2 norm of the gradients or values of `parameters`.
double global_norm(const std::vector<Parameter*>& parameters, bool gradients) {
  double sum = 0;
  for (const Parameter* p : parameters) {
    for (float v : (gradients ? p->gradient : p->value).values<float>()) sum += double(v) * v;
  }
  return std::sqrt(sum);
}

std::string make_temp_model_dir() {
  std::string pattern = (fs::temp_directory_path() / "sluice-model-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw Internal("cannot create a temporary model_dir: " + std::string(std::strerror(errno)));
  }
  return pattern;
}

// Rows of a batch component: its first dimension.
int64_t batch_rows(const Tensor& t) { return t.rank() == 0 ? 1 : t.dim(0); }

// Under a multi-worker strategy only the chief (worker 0) writes checkpoints and summaries, as
// TensorFlow's MultiWorkerMirroredStrategy; the other workers keep their (identical) state in
// memory and write summaries to a temporary directory removed afterwards.
bool is_chief(const RunConfig& config) {
  return !config.train_distribute || config.train_distribute->is_chief();
}

}  // namespace

// The Session hooks see: one per train/evaluate call.
class Estimator::RunSession final : public Session {
 public:
  RunSession(Estimator& estimator, std::string mode, std::string logdir)
      : estimator_(estimator), mode_(std::move(mode)), logdir_(std::move(logdir)) {}
  ~RunSession() override {
    if (writer_) {
      try {
        writer_->close();
      } catch (const std::exception& e) {
        std::cerr << "sluice: closing event file " << writer_->path() << ": " << e.what() << "\n";
      }
    }
    if (!worker_temp_dir_.empty()) {
      std::error_code ignored;
      fs::remove_all(worker_temp_dir_, ignored);
    }
  }
  int64_t global_step() const override { return estimator_.global_step_; }
  const std::string& model_dir() const override { return estimator_.config_.model_dir; }
  const std::string& mode() const override { return mode_; }
  std::string save_checkpoint() override {
    if (mode_ != "train") throw FailedPrecondition("checkpoints are saved only while training");
    return estimator_.save_checkpoint();
  }
  EventFileWriter& summary_writer() override {
    if (!writer_ && !is_chief(estimator_.config_)) worker_temp_dir_ = make_temp_model_dir();
    if (!writer_) {
      writer_ =
          std::make_unique<EventFileWriter>(worker_temp_dir_.empty() ? logdir_ : worker_temp_dir_);
    }
    return *writer_;
  }
  std::vector<StageStatsSnapshot> input_stats() const override {
    return input_ ? input_->stats() : std::vector<StageStatsSnapshot>{};
  }
  void set_input(const InputPipeline* input) { input_ = input; }
  void close() {
    if (writer_) writer_->close();
  }

 private:
  Estimator& estimator_;
  std::string mode_;
  std::string logdir_;
  std::unique_ptr<EventFileWriter> writer_;
  std::string worker_temp_dir_;  // A non-chief worker's summaries (removed at the end).
  const InputPipeline* input_ = nullptr;
};

Estimator::Estimator(ModelSpec spec, RunConfig config)
    : spec_(std::move(spec)),
      config_(std::move(config)),
      checkpoints_((config_.validate(), config_.model_dir.empty()
                                            ? (config_.model_dir = make_temp_model_dir())
                                            : config_.model_dir),
                   config_.keep_checkpoint_max) {
  if (!spec_.model.built()) throw InvalidArgument("Estimator: the model must be built");
  if (!spec_.optimizer) throw InvalidArgument("Estimator: an optimizer is required");
  for (const std::string& name : spec_.metrics) {
    if (name == "loss" || name == "global_step") {
      throw InvalidArgument("Estimator: '" + name + "' is reserved and cannot name a metric");
    }
    metrics_.push_back(make_metric(name, spec_.loss.name()));
  }
  log("Using model_dir: " + config_.model_dir);
}

namespace {

ModelSpec call_model_fn(const std::function<ModelSpec()>& model_fn) {
  if (!model_fn) throw InvalidArgument("Estimator: model_fn is empty");
  ModelSpec spec = model_fn();
  if (!spec.model_fn) spec.model_fn = [model_fn] { return model_fn().model; };
  return spec;
}

}  // namespace

Estimator::Estimator(const std::function<ModelSpec()>& model_fn, RunConfig config)
    : Estimator(call_model_fn(model_fn), std::move(config)) {}

Estimator::~Estimator() = default;

void Estimator::log(const std::string& line) const {
  if (config_.log) *config_.log << line << "\n";
}

Strategy& Estimator::train_strategy() {
  if (config_.train_distribute) return *config_.train_distribute;
  return local_strategy();
}

Strategy& Estimator::eval_strategy() {
  if (config_.eval_distribute) return *config_.eval_distribute;
  return local_strategy();
}

Strategy& Estimator::local_strategy() {
  // Without a strategy the step runs as one local replica: the same path as every strategy's.
  if (!local_strategy_) local_strategy_ = std::make_unique<OneDeviceStrategy>();
  return *local_strategy_;
}

ReplicatedModel& Estimator::replicas_for(std::unique_ptr<ReplicatedModel>& slot,
                                         Strategy& strategy) {
  if (!slot || &slot->strategy() != &strategy) {
    slot = std::make_unique<ReplicatedModel>(strategy, spec_.model, spec_.model_fn);
    slot->load_replica_statistics(replica_statistics_);
  }
  return *slot;
}

InputPipeline Estimator::make_input(const InputFn& input_fn, const Strategy* strategy) const {
  if (!strategy) return InputPipeline(input_fn, config_.input_options);
  return InputPipeline(input_fn, config_.input_options, [strategy](const Dataset& dataset) {
    strategy->validate_input(dataset, /*per_replica_batches=*/false);
  });
}

namespace {

// Calls every hook's end() and rethrows nothing extra: used on the normal paths only.
void end_all(const std::vector<SessionRunHook*>& hooks, Session& session) {
  for (SessionRunHook* h : hooks) h->end(session);
}

std::map<std::string, double> compute_fetches(const std::vector<std::string>& fetches,
                                              float learning_rate, Sequential& model,
                                              bool training) {
  std::map<std::string, double> results;
  for (const std::string& name : fetches) {
    if (name == "learning_rate") {
      results[name] = learning_rate;
    } else if (name == "gradient_norm") {
      results[name] = training ? global_norm(model.trainable_parameters(), true) : 0.0;
    } else if (name == "weight_norm") {
      results[name] = global_norm(model.trainable_parameters(), false);
    } else {
      throw InvalidArgument("a hook asked for the unknown value '" + name +
                            "' (known: learning_rate, gradient_norm, weight_norm)");
    }
  }
  return results;
}

}  // namespace

Estimator& Estimator::train(const InputFn& input_fn, const std::vector<SessionRunHook*>& hooks,
                            std::optional<int64_t> steps, std::optional<int64_t> max_steps) {
  if (steps && max_steps) throw InvalidArgument("Can not provide both steps and max_steps.");
  if (steps && *steps <= 0)
    throw InvalidArgument("Must specify steps > 0, given: " + std::to_string(*steps));
  if (max_steps && *max_steps <= 0) {
    throw InvalidArgument("Must specify max_steps > 0, given: " + std::to_string(*max_steps));
  }
  restore_latest();
  if (max_steps && global_step_ >= *max_steps) {
    log("Skipping training since max_steps has already saved.");
    return *this;
  }

  const TrainingHooks training_hooks(config_, hooks, steps, max_steps);
  const std::vector<SessionRunHook*>& all = training_hooks.all();

  RunSession session(*this, "train", config_.model_dir);
  for (SessionRunHook* h : all) h->begin();
  for (SessionRunHook* h : all) h->after_create_session(session);

  InputPipeline input = make_input(input_fn, config_.train_distribute.get());
  session.set_input(&input);
  if (config_.checkpoint_input_pipeline) {
    const Strategy& strategy = train_strategy();
    const std::optional<std::string> position = saved_input_position(
        restored_input_positions_, strategy.num_workers(), strategy.worker_index());
    if (position) {
      log(input.restore_state(*position)
              ? "Continuing the input from the position the checkpoint saved."
              : "The checkpoint's input position is of another pipeline: the input starts from "
                "its beginning.");
    }
  }
  // Checkpoints written during this call hold the input's position (see state()).
  if (config_.checkpoint_input_pipeline) training_input_ = &input;
  struct Forget {
    InputPipeline*& input;
    ~Forget() { input = nullptr; }
  } forget{training_input_};
  Sequential& model = spec_.model;
  ReplicatedModel& replicas = replicas_for(train_replicas_, train_strategy());
  int64_t steps_run = 0;
  double last_loss = 0;
  std::vector<SessionRunArgs> args(all.size());
  // Each pass is one execution of up to RunConfig::steps_per_execution steps between one
  // before_run and one after_run of every hook (TPUEstimator's iterations_per_loop, Keras'
  // steps_per_execution). The last one is cut short so that steps / max_steps end exactly.
  const std::optional<int64_t> last_step =
      steps ? std::optional<int64_t>(global_step_ + *steps) : max_steps;
  bool input_ended = false;
  while (!input_ended) {
    SessionRunContext context(session);
    for (size_t i = 0; i < all.size(); ++i) args[i] = all[i]->before_run(context);

    const auto start = Clock::now();
    int64_t to_run = config_.steps_per_execution;
    if (last_step) to_run = std::clamp<int64_t>(*last_step - global_step_, 1, to_run);
    SessionRunValues values;
    double loss_sum = 0;  // Σ loss × rows over the execution's steps.
    int64_t executed = 0;
    std::vector<std::map<std::string, double>> results(all.size());
    // Metrics see the rows of this execution only (one step's without steps_per_execution).
    for (auto& m : metrics_) m->reset_state();
    while (executed < to_run) {
      const auto wait_start = Clock::now();
      std::optional<Element> batch = input.next();
      values.input_wait_seconds += seconds_since(wait_start);
      // End of input: the steps run so far still make an execution. Several workers stop
      // together when any one's input ended.
      if (!replicas.all_workers_have_input(
              batch ? std::optional<int64_t>(batch_rows((*batch)[spec_.features_key]))
                    : std::nullopt)) {
        input_ended = true;
        break;
      }
      const ReplicatedModel::StepResult step =
          replicas.train_step(*batch, spec_.features_key, spec_.labels_key, spec_.loss, metrics_);
      // The regularization loss comes with the update, below.
      double step_loss = step.loss;
      const int64_t step_rows = step.batch_size;  // Every worker's rows.
      // Fetches are the execution's last step's, read before the update consumes the gradients.
      if (executed + 1 == to_run) {
        const float learning_rate = spec_.optimizer->current_learning_rate();
        for (size_t i = 0; i < all.size(); ++i) {
          if (args[i].fetches.empty()) continue;
          if (std::ranges::count(args[i].fetches, "gradient_norm") > 0) {
            replicas.finish_gradients();
          }
          results[i] = compute_fetches(args[i].fetches, learning_rate, model, true);
        }
      }
      // On the strategy's threads, the new weights copied to every replica.
      step_loss += replicas.apply_gradients(*spec_.optimizer);
      ++global_step_;
      ++steps_run;
      ++executed;
      loss_sum += step_loss * double(step_rows);
      values.batch_size += step_rows;
      last_loss = step_loss;
    }
    // End of input before any step: no after_run for this execution, end() for every hook.
    if (executed == 0) break;
    if (executed < to_run) {
      // Cut short by the end of input: the fetches read the last step's gradients, still held.
      for (size_t i = 0; i < all.size(); ++i) {
        if (!args[i].fetches.empty()) {
          results[i] = compute_fetches(args[i].fetches, spec_.optimizer->current_learning_rate(),
                                       model, true);
        }
      }
    }

    values.steps = executed;
    // The loss over the execution's examples: the batch's loss without steps_per_execution.
    values.loss = values.batch_size > 0 ? loss_sum / double(values.batch_size) : last_loss;
    for (auto& m : metrics_) values.metrics[m->name()] = m->result();
    values.global_step = global_step_;
    values.step_seconds = seconds_since(start);
    for (size_t i = 0; i < all.size(); ++i) {
      values.results = std::move(results[i]);
      all[i]->after_run(context, values);
    }
    if (context.stop_requested()) break;
  }
  end_all(all, session);
  session.close();
  if (steps_run == 0) {
    log("Training with estimator made no steps. Perhaps input is empty or misspecified.");
  } else {
    std::ostringstream line;
    line << "Loss for final step: " << last_loss << ".";
    log(line.str());
  }
  return *this;
}

EvalResult Estimator::evaluate(const InputFn& input_fn, std::optional<int64_t> steps,
                               const std::vector<SessionRunHook*>& hooks, const std::string& name) {
  if (steps && *steps <= 0)
    throw InvalidArgument("Must specify steps > 0, given: " + std::to_string(*steps));
  const std::string checkpoint = restore_latest();
  if (checkpoint.empty()) {
    log("Could not find trained model in model_dir: " + config_.model_dir +
        ", running initialization to evaluate.");
  }
  const std::string eval_dir =
      (fs::path(config_.model_dir) / (name.empty() ? "eval" : "eval_" + name)).string();
  RunSession session(*this, "eval", eval_dir);
  for (SessionRunHook* h : hooks) h->begin();
  for (SessionRunHook* h : hooks) h->after_create_session(session);
  for (auto& m : metrics_) m->reset_state();

  InputPipeline input = make_input(input_fn, config_.eval_distribute.get());
  session.set_input(&input);
  Sequential& model = spec_.model;
  ReplicatedModel& replicas = replicas_for(eval_replicas_, eval_strategy());
  double loss_sum = 0;  // Σ batch loss × rows: the mean over examples, whatever the batch size.
  int64_t batches = 0, rows = 0;
  std::vector<SessionRunArgs> args(hooks.size());
  while (!steps || batches < *steps) {
    SessionRunContext context(session);
    for (size_t i = 0; i < hooks.size(); ++i) args[i] = hooks[i]->before_run(context);
    const auto start = Clock::now();
    std::optional<Element> batch = input.next();
    const double wait = seconds_since(start);
    if (!batch) break;
    const Tensor& x = (*batch)[spec_.features_key];
    const double batch_loss =
        replicas.eval_step(*batch, spec_.features_key, spec_.labels_key, spec_.loss, metrics_);
    // Keras weighs each batch's mean loss by its size, so a short last batch counts for what it
    // holds and every batch size gives the same figure.
    const int64_t batch_size = batch_rows(x);
    loss_sum += batch_loss * double(batch_size);
    rows += batch_size;
    ++batches;
    SessionRunValues values;
    values.global_step = global_step_;
    values.loss = batch_loss;
    values.batch_size = batch_size;
    values.input_wait_seconds = wait;
    for (auto& m : metrics_) {
      values.metrics[m->name()] = m->result();  // Streaming: every batch so far.
    }
    values.step_seconds = seconds_since(start);
    for (size_t i = 0; i < hooks.size(); ++i) {
      values.results =
          args[i].fetches.empty()
              ? std::map<std::string, double>{}
              : compute_fetches(args[i].fetches, spec_.optimizer->current_learning_rate(), model,
                                false);
      hooks[i]->after_run(context, values);
    }
    if (context.stop_requested()) break;
  }
  end_all(hooks, session);

  // Several workers each evaluated their share of the input: the loss and every metric are
  // merged as sums, so every worker reports what one process evaluating all of it would.
  if (replicas.strategy().num_workers() > 1) {
    std::vector<double> sums{loss_sum, static_cast<double>(rows)};
    for (auto& m : metrics_) {
      const std::vector<double> metric = m->sums();
      sums.insert(sums.end(), metric.begin(), metric.end());
    }
    replicas.strategy().all_reduce_across_workers(sums);
    loss_sum = sums[0];
    rows = static_cast<int64_t>(sums[1]);
    size_t at = 2;
    for (auto& m : metrics_) {
      const size_t size = m->sums().size();
      m->set_sums(std::vector<double>(sums.begin() + at, sums.begin() + at + size));
      at += size;
    }
  }
  EvalResult result;
  result["loss"] = rows > 0 ? loss_sum / double(rows) : 0.0;
  for (auto& m : metrics_) result[m->name()] = m->result();
  std::vector<std::pair<std::string, float>> scalars;
  std::string line = "Saving dict for global step " + std::to_string(global_step_) + ":";
  bool first = true;
  for (const auto& [key, value] : result) {
    scalars.emplace_back(key, static_cast<float>(value));
    std::ostringstream item;
    item << (first ? " " : ", ") << key << " = " << value;
    line += item.str();
    first = false;
  }
  result["global_step"] = static_cast<double>(global_step_);
  session.summary_writer().add_scalars(global_step_, scalars);
  session.close();
  log(line);
  return result;
}

Predictions Estimator::predict(const InputFn& input_fn) {
  if (restore_latest().empty()) {
    log("Could not find trained model in model_dir: " + config_.model_dir +
        ", running initialization to predict.");
  }
  return Predictions(*this, make_input(input_fn));
}

std::optional<Prediction> Predictions::next() {
  while (index_ >= size_) {
    std::optional<Element> batch = input_.next();
    if (!batch) return std::nullopt;
    const ModelSpec& spec = estimator_->spec_;
    features_ = (*batch)[spec.features_key];
    has_labels_ = batch->has(spec.labels_key);
    if (has_labels_) labels_ = (*batch)[spec.labels_key];
    outputs_ = estimator_->spec_.model.forward(features_, /*training=*/false);
    size_ = batch_rows(outputs_);
    index_ = 0;
  }
  const Tensor label = has_labels_ ? labels_.select(index_) : Tensor();
  Prediction p = decode_prediction(outputs_.select(index_), features_.select(index_),
                                   has_labels_ ? &label : nullptr);
  ++index_;
  return p;
}

}  // namespace sluice
