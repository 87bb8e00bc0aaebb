#include "sluice/estimator/estimator.h"

#include <algorithm>
#include <sstream>

#include "sluice/core/errors.h"
#include "sluice/estimator/replicated_model.h"
#include "sluice/estimator/run_session.h"
#include "sluice/estimator/training_hooks.h"
#include "sluice/model/layer.h"
#include "sluice/strategy/one_device_strategy.h"
#include "sluice/strategy/strategy.h"

namespace sluice {

using estimator_internal::batch_rows;
using estimator_internal::Clock;
using estimator_internal::compute_fetches;
using estimator_internal::end_all;
using estimator_internal::make_temp_model_dir;
using estimator_internal::seconds_since;

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
  spec_.optimizer->build(model.trainable_parameters());
  replicas.share_gradients_with_workers();
  // Several workers start the first step together, so that no worker's setup counts as part of
  // another's first step (the step timers measure training).
  if (config_.train_distribute) config_.train_distribute->barrier();
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
    // Several workers shard a step's update unless a hook reads its gradients.
    const bool shardable = std::ranges::none_of(
        args, [](const auto& a) { return std::ranges::count(a.fetches, "gradient_norm") > 0; });

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
                    : std::nullopt,
              shardable)) {
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
    // A stop that one worker's hook requests ends every worker's loop at this step, before any
    // reads another batch that no step would train on.
    if (session.on_any_worker(context.stop_requested())) break;
  }
  // Every worker's slots whole again, for the last checkpoint and for state().
  replicas.gather_optimizer_state(*spec_.optimizer);
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

}  // namespace sluice
