#include "sluice/estimator/training.h"

#include <chrono>

#include "sluice/core/errors.h"
#include "sluice/estimator/basic_session_run_hooks.h"
#include "sluice/strategy/strategy.h"

namespace sluice {
namespace {

// Evaluates after the checkpoints of one training run (TensorFlow's _NewCheckpointListener-
// ForEvaluate): not after the save of the starting step, which only records the starting point,
// and at most once per throttle_secs after the later ones. evaluate() restores the latest
// checkpoint into the model being trained; right after a save that is the model's own state.
class EvaluateAfterSave {
 public:
  EvaluateAfterSave(Estimator& estimator, const EvalSpec& spec)
      : estimator_(estimator), spec_(spec) {
    if (spec.throttle_secs > 0) throttle_.emplace(spec.throttle_secs, std::nullopt);
  }

  void start(int64_t step) { start_step_ = step; }

  void after_save(int64_t step) {
    if (step == start_step_) return;
    bool due = !throttle_ || throttle_->should_trigger_for_step(step);
    // An evaluation over several workers is all of theirs, but each process's clock is its own:
    // all evaluate when any one's throttle allows it.
    const std::shared_ptr<Strategy>& workers = estimator_.config().eval_distribute;
    if (throttle_ && workers) due = workers->on_any_worker(due);
    if (!due) {
      log("Skip the current checkpoint eval due to throttle secs (" +
          std::to_string(static_cast<int64_t>(spec_.throttle_secs)) + " secs).");
      return;
    }
    evaluate(step);
  }

  // At the end of training: the final step is evaluated if no evaluation covered it.
  void finish(int64_t step) {
    if (!last_evaluated_ || *last_evaluated_ != step) evaluate(step);
  }

  const EvalResult& result() const { return result_; }

 private:
  void evaluate(int64_t step) {
    if (throttle_) throttle_->update_last_triggered_step(step);
    result_ = estimator_.evaluate(spec_.input_fn, spec_.steps, spec_.hooks, spec_.name);
    last_evaluated_ = step;
  }
  void log(const std::string& line) const {
    if (estimator_.config().log) *estimator_.config().log << line << "\n";
  }

  Estimator& estimator_;
  const EvalSpec& spec_;
  // A timer of throttle_secs whose first call always triggers; none when throttle_secs is 0.
  std::optional<SecondOrStepTimer> throttle_;
  std::optional<int64_t> start_step_;
  std::optional<int64_t> last_evaluated_;
  EvalResult result_;
};

// Tells the listener the step training starts from; runs before the saver's first save.
class TrainingStartHook final : public SessionRunHook {
 public:
  explicit TrainingStartHook(EvaluateAfterSave& listener) : listener_(listener) {}
  void after_create_session(Session& session) override { listener_.start(session.global_step()); }

 private:
  EvaluateAfterSave& listener_;
};

// Runs EvaluateAfterSave::finish when training ends normally (after the saver's last save).
class FinalEvaluationHook final : public SessionRunHook {
 public:
  explicit FinalEvaluationHook(EvaluateAfterSave& listener) : listener_(listener) {}
  void end(Session& session) override { listener_.finish(session.global_step()); }

 private:
  EvaluateAfterSave& listener_;
};

}  // namespace

EvalResult train_and_evaluate(Estimator& estimator, const TrainSpec& train_spec,
                              const EvalSpec& eval_spec) {
  if (train_spec.max_steps && *train_spec.max_steps <= 0) {
    throw InvalidArgument("Must specify max_steps > 0, given: " +
                          std::to_string(*train_spec.max_steps));
  }
  if (eval_spec.steps && *eval_spec.steps <= 0) {
    throw InvalidArgument("Must specify steps > 0, given: " + std::to_string(*eval_spec.steps));
  }
  if (eval_spec.start_delay_secs < 0) {
    throw InvalidArgument("Must specify start_delay_secs >= 0, given: " +
                          std::to_string(eval_spec.start_delay_secs));
  }
  if (eval_spec.throttle_secs < 0) {
    throw InvalidArgument("Must specify throttle_secs >= 0, given: " +
                          std::to_string(eval_spec.throttle_secs));
  }
  const RunConfig& config = estimator.config();
  const int64_t save_steps = config.save_checkpoints_steps.value_or(0);
  const double save_secs =
      config.save_checkpoints_secs.value_or(config.save_checkpoints_steps ? 0.0 : 600.0);
  if (save_steps <= 0 && save_secs <= 0) {
    throw InvalidArgument(
        "train_and_evaluate evaluates after checkpoints: set RunConfig.save_checkpoints_steps or "
        "save_checkpoints_secs");
  }

  EvaluateAfterSave listener(estimator, eval_spec);
  CheckpointSaverHook saver(
      config.log, save_secs > 0 ? std::optional<double>(save_secs) : std::nullopt,
      save_steps > 0 ? std::optional<int64_t>(save_steps) : std::nullopt, [&](int64_t step) {
        listener.after_save(step);
        return false;
      });
  TrainingStartHook start(listener);
  FinalEvaluationHook final_evaluation(listener);
  // The saver before the user's hooks (its end() writes the last checkpoint, which the final
  // evaluation restores), the final evaluation after them.
  std::vector<SessionRunHook*> hooks{&start, &saver};
  hooks.insert(hooks.end(), train_spec.hooks.begin(), train_spec.hooks.end());
  hooks.push_back(&final_evaluation);
  estimator.train(train_spec.input_fn, hooks, std::nullopt, train_spec.max_steps);
  return listener.result();
}

}  // namespace sluice
