// SessionRunHook: code that runs around each training (or evaluation) step, with TensorFlow's
// lifecycle and order (tf.estimator.SessionRunHook under a MonitoredSession):
//
//   for h in hooks: h.begin()
//   restore the latest checkpoint or keep the initial weights
//   for h in hooks: h.after_create_session(session)
//   until a hook requested stop or the input ended:
//     for h in hooks: args[h] = h.before_run(ctx)       // may ask for extra values by name
//     run one step (the input is read here: its end stops the loop before any after_run)
//     for h in hooks: h.after_run(ctx, values[h])       // every hook, even after a stop request
//   for h in hooks: h.end(session)                      // on normal exit or end of input only
//
// Calls are always in hook-list order. An exception from the step or from a hook propagates at
// once: the remaining after_run calls and every end() are skipped (so no final checkpoint), as
// TensorFlow. Hooks are called from the thread that called train/evaluate.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sluice/graph/stats.h"

namespace sluice {

class EventFileWriter;

// What hooks see of the running loop: TensorFlow's session, reduced to what the Estimator owns.
class Session {
 public:
  virtual ~Session() = default;
  // The global step now: after restoring in after_create_session, after the step in after_run.
  virtual int64_t global_step() const = 0;
  virtual const std::string& model_dir() const = 0;
  // "train", "eval" or "infer" (TensorFlow's ModeKeys).
  virtual const std::string& mode() const = 0;
  // Writes model.ckpt-<global_step> (and prunes old ones); returns its path. Throws
  // FailedPrecondition outside training.
  virtual std::string save_checkpoint() = 0;
  // The event file of this run's directory (model_dir for training, eval[_name] for evaluation),
  // created on first use. Valid until the run ends.
  virtual EventFileWriter& summary_writer() = 0;
  // Per-stage statistics of the input pipeline being read (cumulative since it started); empty
  // when there is none (yet).
  virtual std::vector<StageStatsSnapshot> input_stats() const { return {}; }
  // Whether `mine` holds on any worker of a multi-worker run, `mine` itself otherwise. Under
  // several workers it is a collective: every worker's hook must ask at the same point (the same
  // step). A hook whose action every worker must take together, such as saving a checkpoint,
  // decides with it when it decides by its own process's clock.
  virtual bool on_any_worker(bool mine) { return mine; }
};

// What a hook's before_run asks for: names of extra values to compute for this step. Known names:
// "learning_rate" (the rate the step used), "gradient_norm" (global L2 norm of the gradients; 0
// outside training), "weight_norm" (global L2 norm of the trainable weights). Unknown names are an
// InvalidArgument error of the step.
struct SessionRunArgs {
  std::vector<std::string> fetches;
};

class SessionRunContext {
 public:
  explicit SessionRunContext(Session& session) : session_(&session) {}
  Session& session() const { return *session_; }
  // Ends the loop after this step's after_run calls (all of them, in order).
  void request_stop() { stop_requested_ = true; }
  bool stop_requested() const { return stop_requested_; }

 private:
  Session* session_;
  bool stop_requested_ = false;
};

struct SessionRunValues {
  int64_t global_step = 0;  // After the step.
  // Training steps this run made: RunConfig::steps_per_execution (fewer in the last execution);
  // 1 in evaluation. The values below then cover all of those steps' batches.
  int64_t steps = 1;
  double loss = 0.0;  // The batch's loss (the mean over its examples).
  // Each metric on this batch alone (accumulate over batches for running values).
  std::map<std::string, double> metrics;
  int64_t batch_size = 0;
  double step_seconds = 0.0;        // Wall time of the step, input wait included.
  double input_wait_seconds = 0.0;  // Time spent waiting for the batch.
  // The values this hook's before_run asked for, by name; empty when it asked for none.
  std::map<std::string, double> results;
};

class SessionRunHook {
 public:
  virtual ~SessionRunHook() = default;
  virtual void begin() {}
  // Called again for every train/evaluate call the hook takes part in.
  virtual void after_create_session(Session& session) { (void)session; }
  virtual SessionRunArgs before_run(SessionRunContext& context) {
    (void)context;
    return {};
  }
  virtual void after_run(SessionRunContext& context, const SessionRunValues& values) {
    (void)context;
    (void)values;
  }
  virtual void end(Session& session) { (void)session; }
};

}  // namespace sluice
