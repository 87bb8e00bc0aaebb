#include "sluice/estimator/basic_session_run_hooks.h"

#include <cmath>
#include <cstdio>

#include "sluice/estimator/checkpoint.h"
#include "sluice/formats/event_file_writer.h"

namespace sluice {
namespace {

std::string format_number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

}  // namespace

// --- LoggingHook ---------------------------------------------------------------------------------

LoggingHook::LoggingHook(std::ostream* out, std::optional<int64_t> every_n_iter,
                         std::optional<double> every_n_secs)
    : out_(out), timer_(every_n_secs, every_n_iter) {}

void LoggingHook::begin() {
  timer_.reset();
  iteration_ = 0;
}

void LoggingHook::after_run(SessionRunContext&, const SessionRunValues& values) {
  const int64_t iteration = iteration_++;
  if (!timer_.should_trigger_for_step(iteration)) return;
  const auto elapsed = timer_.update_last_triggered_step(iteration);
  if (!out_) return;
  std::string line =
      "loss = " + format_number(values.loss) + ", step = " + std::to_string(values.global_step);
  for (const auto& [name, value] : values.metrics)
    line += ", " + name + " = " + format_number(value);
  if (elapsed) {
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), " (%.3f sec)", elapsed->first);
    line += seconds;
  }
  *out_ << line << "\n";
}

// --- StopAtStepHook ------------------------------------------------------------------------------

StopAtStepHook::StopAtStepHook(std::optional<int64_t> num_steps, std::optional<int64_t> last_step)
    : num_steps_(num_steps), last_step_(last_step) {
  if (num_steps_.has_value() == last_step_.has_value()) {
    throw InvalidArgument("StopAtStepHook needs exactly one of num_steps and last_step");
  }
  if (num_steps_.value_or(1) <= 0 || last_step_.value_or(1) <= 0) {
    throw InvalidArgument("StopAtStepHook: the step count must be > 0");
  }
}

void StopAtStepHook::after_create_session(Session& session) {
  if (num_steps_) last_step_ = session.global_step() + *num_steps_;
}

void StopAtStepHook::after_run(SessionRunContext& context, const SessionRunValues& values) {
  if (values.global_step >= *last_step_) context.request_stop();
}

// --- CheckpointSaverHook -------------------------------------------------------------------------

CheckpointSaverHook::CheckpointSaverHook(std::ostream* log, std::optional<double> save_secs,
                                         std::optional<int64_t> save_steps,
                                         std::function<bool(int64_t)> after_save)
    : log_(log), timer_(save_secs, save_steps), after_save_(std::move(after_save)) {}

void CheckpointSaverHook::begin() {
  timer_.reset();
  saved_.clear();
  stop_after_save_ = false;
}

void CheckpointSaverHook::save(Session& session) {
  const int64_t step = session.global_step();
  if (log_)
    *log_ << "Saving checkpoints for " << step << " into " << session.model_dir()
          << "/model.ckpt.\n";
  const std::string path = session.save_checkpoint();
  session.summary_writer().add_checkpoint(step, path);
  timer_.update_last_triggered_step(step);
  saved_.push_back(step);
  if (after_save_ && after_save_(step)) stop_after_save_ = true;
}

void CheckpointSaverHook::after_create_session(Session& session) {
  // Resuming: the checkpoint just restored already holds this step; saving it again is waste.
  std::optional<CheckpointState> state;
  try {
    state = read_checkpoint_state(session.model_dir());
  } catch (const DataLoss&) {
  }
  if (state && checkpoint_step(state->model_checkpoint_path) == session.global_step()) {
    timer_.update_last_triggered_step(session.global_step());
    return;
  }
  save(session);
}

void CheckpointSaverHook::after_run(SessionRunContext& context, const SessionRunValues& values) {
  bool due = timer_.should_trigger_for_step(values.global_step);
  // Every worker takes part in a save, but each process's clock is its own: by seconds, all save
  // when any one is due.
  if (timer_.counts_seconds()) due = context.session().on_any_worker(due);
  if (due) save(context.session());
  if (stop_after_save_) context.request_stop();
}

void CheckpointSaverHook::end(Session& session) {
  if (timer_.last_triggered_step() != session.global_step()) save(session);
}

// --- StepCounterHook -----------------------------------------------------------------------------

StepCounterHook::StepCounterHook(std::ostream* log, std::optional<int64_t> every_n_steps,
                                 std::optional<double> every_n_secs)
    : log_(log), timer_(every_n_secs, every_n_steps) {}

void StepCounterHook::begin() {
  timer_.reset();
  examples_ = 0;
}

void StepCounterHook::after_run(SessionRunContext& context, const SessionRunValues& values) {
  examples_ += values.batch_size;
  if (!timer_.should_trigger_for_step(values.global_step)) return;
  const auto elapsed = timer_.update_last_triggered_step(values.global_step);
  // The examples of the triggering step belong to the next interval's baseline on the first
  // trigger, and to this interval afterwards: both intervals then span the same steps.
  if (!elapsed) {
    examples_ = 0;
    return;
  }
  if (elapsed->first > 0) {
    steps_per_sec_ = static_cast<double>(elapsed->second) / elapsed->first;
    examples_per_sec_ = static_cast<double>(examples_) / elapsed->first;
    context.session().summary_writer().add_scalars(
        values.global_step, {{"global_step/sec", static_cast<float>(steps_per_sec_)},
                             {"examples/sec", static_cast<float>(examples_per_sec_)}});
    if (log_) *log_ << "global_step/sec: " << format_number(steps_per_sec_) << "\n";
  }
  examples_ = 0;
}

// --- SummarySaverHook ----------------------------------------------------------------------------

SummarySaverHook::SummarySaverHook(std::optional<int64_t> save_steps,
                                   std::optional<double> save_secs)
    : timer_(save_secs, save_steps) {}

void SummarySaverHook::begin() {
  timer_.reset();
  wrote_ = false;
}

SessionRunArgs SummarySaverHook::before_run(SessionRunContext& context) {
  // The step about to run ends at global_step + 1: ask for the rate only when it will be written.
  if (timer_.should_trigger_for_step(context.session().global_step() + 1)) {
    return {{"learning_rate"}};
  }
  return {};
}

void SummarySaverHook::after_run(SessionRunContext& context, const SessionRunValues& values) {
  if (!timer_.should_trigger_for_step(values.global_step)) return;
  timer_.update_last_triggered_step(values.global_step);
  std::vector<std::pair<std::string, float>> scalars{{"loss", static_cast<float>(values.loss)}};
  for (const auto& [name, value] : values.metrics)
    scalars.emplace_back(name, static_cast<float>(value));
  if (auto lr = values.results.find("learning_rate"); lr != values.results.end()) {
    scalars.emplace_back("learning_rate", static_cast<float>(lr->second));
  }
  context.session().summary_writer().add_scalars(values.global_step, scalars);
  wrote_ = true;
}

void SummarySaverHook::end(Session& session) {
  if (wrote_) session.summary_writer().flush();
}

// --- NanLossHook ---------------------------------------------------------------------------------

void NanLossHook::after_run(SessionRunContext& context, const SessionRunValues& values) {
  if (!std::isnan(values.loss)) return;
  if (log_) *log_ << "Model diverged with loss = NaN.\n";
  if (fail_) {
    throw NanLossDuringTrainingError("NaN loss during training (global step " +
                                     std::to_string(values.global_step) + ")");
  }
  context.request_stop();
}

// --- TimeHistoryHook -----------------------------------------------------------------------------

void TimeHistoryHook::begin() {
  step_seconds_.clear();
  first_start_.reset();
  total_seconds_ = 0;
  input_wait_seconds_ = 0;
  examples_ = 0;
}

SessionRunArgs TimeHistoryHook::before_run(SessionRunContext&) {
  step_start_ = Clock::now();
  if (!first_start_) first_start_ = step_start_;
  return {};
}

void TimeHistoryHook::after_run(SessionRunContext&, const SessionRunValues& values) {
  const Clock::time_point now = Clock::now();
  step_seconds_.push_back(std::chrono::duration<double>(now - step_start_).count());
  total_seconds_ = std::chrono::duration<double>(now - *first_start_).count();
  examples_ += values.batch_size;
  input_wait_seconds_ += values.input_wait_seconds;
}

}  // namespace sluice
