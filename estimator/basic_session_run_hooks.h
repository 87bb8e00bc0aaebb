// The built-in SessionRunHooks (tf.estimator's basic_session_run_hooks): logging, stopping at a
// step, checkpointing, step rate, summaries, NaN-loss detection and the tutorials' throughput
// hook. The Estimator adds the first five itself from its RunConfig; users pass more to train().
// Each hook is not thread-safe and keeps per-run state: one train()/evaluate() at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/estimator/second_or_step_timer.h"
#include "sluice/estimator/session_run_hook.h"

namespace sluice {

// NanLossHook's error: the loss became NaN (TensorFlow's NanLossDuringTrainingError).
class NanLossDuringTrainingError final : public Error {
 public:
  explicit NanLossDuringTrainingError(const std::string& message)
      : Error(ErrorCode::kInternal, message) {}
  std::exception_ptr with_context(std::string_view context) const override {
    return std::make_exception_ptr(NanLossDuringTrainingError(std::string(what()).append(context)));
  }
};

// Logs "loss = <v>, step = <global step>[, <metric> = <v> ...]" (metrics in name order) every N
// local iterations (counted from 0, so the first step logs) or N seconds, with " (<t> sec)" since
// the previous line from the second line on (LoggingTensorHook's format).
class LoggingHook final : public SessionRunHook {
 public:
  // Exactly one period; `out` null logs nothing. Throws InvalidArgument otherwise.
  LoggingHook(std::ostream* out, std::optional<int64_t> every_n_iter,
              std::optional<double> every_n_secs = std::nullopt);
  void begin() override;
  void after_run(SessionRunContext& context, const SessionRunValues& values) override;

 private:
  std::ostream* out_;
  SecondOrStepTimer timer_;
  int64_t iteration_ = 0;
};

// Requests stop once the global step reaches last_step; `num_steps` means last_step = (global
// step after restoring) + num_steps, computed in after_create_session.
class StopAtStepHook final : public SessionRunHook {
 public:
  // Exactly one, positive (InvalidArgument otherwise).
  static StopAtStepHook num_steps(int64_t n) { return StopAtStepHook(n, std::nullopt); }
  static StopAtStepHook last_step(int64_t n) { return StopAtStepHook(std::nullopt, n); }
  StopAtStepHook(std::optional<int64_t> num_steps, std::optional<int64_t> last_step);

  void after_create_session(Session& session) override;
  void after_run(SessionRunContext& context, const SessionRunValues& values) override;
  // The step this run stops at. REQUIRES: after_create_session ran.
  int64_t stop_step() const { return *last_step_; }

 private:
  std::optional<int64_t> num_steps_;
  std::optional<int64_t> last_step_;
};

// Saves a checkpoint when the session is created (unless the latest one already is of the
// current step), every N steps or seconds, and at the end (unless the last save was of the
// current step). Under several workers, a save by seconds is every worker's when any one's clock
// says it is due (Session::on_any_worker), so that all save at the same steps. Each save logs
// "Saving checkpoints for <step> into <path>." and writes a SessionLog CHECKPOINT event.
// `after_save(step)` returning true requests stop (TensorFlow's
// CheckpointSaverListener.after_save).
class CheckpointSaverHook final : public SessionRunHook {
 public:
  CheckpointSaverHook(std::ostream* log, std::optional<double> save_secs,
                      std::optional<int64_t> save_steps,
                      std::function<bool(int64_t step)> after_save = {});
  void begin() override;
  void after_create_session(Session& session) override;
  void after_run(SessionRunContext& context, const SessionRunValues& values) override;
  void end(Session& session) override;
  // Global steps of the saves of this run, in order.
  const std::vector<int64_t>& saved_steps() const { return saved_; }

 private:
  void save(Session& session);

  std::ostream* log_;
  SecondOrStepTimer timer_;
  std::function<bool(int64_t)> after_save_;
  std::vector<int64_t> saved_;
  bool stop_after_save_ = false;
};

// Measures global steps/s and examples/s between triggers (the first trigger only sets the
// baseline), writes them as "global_step/sec" and "examples/sec" summaries and logs
// "global_step/sec: <r>".
class StepCounterHook final : public SessionRunHook {
 public:
  StepCounterHook(std::ostream* log, std::optional<int64_t> every_n_steps,
                  std::optional<double> every_n_secs = std::nullopt);
  void begin() override;
  void after_run(SessionRunContext& context, const SessionRunValues& values) override;
  // The last rates measured (0 before the second trigger).
  double steps_per_sec() const { return steps_per_sec_; }
  double examples_per_sec() const { return examples_per_sec_; }

 private:
  std::ostream* log_;
  SecondOrStepTimer timer_;
  int64_t examples_ = 0;
  double steps_per_sec_ = 0;
  double examples_per_sec_ = 0;
};

// Writes "loss", each metric and "learning_rate" as scalar summaries of the step on the first
// step and then every N steps or seconds; flushes at the end.
class SummarySaverHook final : public SessionRunHook {
 public:
  SummarySaverHook(std::optional<int64_t> save_steps,
                   std::optional<double> save_secs = std::nullopt);
  void begin() override;
  SessionRunArgs before_run(SessionRunContext& context) override;
  void after_run(SessionRunContext& context, const SessionRunValues& values) override;
  void end(Session& session) override;

 private:
  SecondOrStepTimer timer_;
  bool wrote_ = false;
};

// Checks every step's loss for NaN (not ±Inf, as TensorFlow): logs "Model diverged with loss =
// NaN." and throws NanLossDuringTrainingError, or with fail_on_nan_loss = false requests stop.
class NanLossHook final : public SessionRunHook {
 public:
  explicit NanLossHook(bool fail_on_nan_loss = true, std::ostream* log = nullptr)
      : fail_(fail_on_nan_loss), log_(log) {}
  void after_run(SessionRunContext& context, const SessionRunValues& values) override;

 private:
  bool fail_;
  std::ostream* log_;
};

// The tutorials' TimeHistory: the wall time of every step (before_run to after_run), the total
// time from the first before_run to the last after_run, examples per second, and how long the
// steps waited for input.
class TimeHistoryHook final : public SessionRunHook {
 public:
  void begin() override;
  SessionRunArgs before_run(SessionRunContext& context) override;
  void after_run(SessionRunContext& context, const SessionRunValues& values) override;

  const std::vector<double>& step_seconds() const { return step_seconds_; }
  double total_seconds() const { return total_seconds_; }
  int64_t examples() const { return examples_; }
  // Summed over the steps: the time they waited for their batch (SessionRunValues).
  double input_wait_seconds() const { return input_wait_seconds_; }
  // Throughput over total_seconds(); 0 before any step.
  double examples_per_second() const {
    return total_seconds_ > 0 ? static_cast<double>(examples_) / total_seconds_ : 0.0;
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::vector<double> step_seconds_;
  std::optional<Clock::time_point> first_start_;
  Clock::time_point step_start_{};
  double total_seconds_ = 0;
  double input_wait_seconds_ = 0;
  int64_t examples_ = 0;
};

}  // namespace sluice
