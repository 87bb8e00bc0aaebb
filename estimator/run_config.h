// RunConfig: how an Estimator runs, as tf.estimator.RunConfig — where it keeps its files, how
// often it checkpoints, logs and writes summaries, and the seed of its randomness.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "graph/options.h"

namespace sluice {

struct RunConfig {
  // Checkpoints and event files go here. Empty: the Estimator makes a fresh temporary directory
  // and says so on its log, as TensorFlow.
  std::string model_dir;
  // Periodic checkpoints every N global steps or every N seconds; at most one of the two may be
  // set. Neither set: every 600 seconds (TensorFlow's default). Set both to 0 for no periodic
  // checkpoints (and no CheckpointSaverHook): then train() keeps its weights only in memory.
  std::optional<int64_t> save_checkpoints_steps;
  std::optional<double> save_checkpoints_secs;
  // The newest N checkpoints are kept, older ones deleted; 0 keeps all.
  int64_t keep_checkpoint_max = 5;
  // Period in global steps of the global_step/sec summary and of the "loss = …, step = …" log
  // line; 0 disables both.
  int64_t log_step_count_steps = 100;
  // Period in global steps of the loss / metrics / learning-rate summaries; 0 disables them.
  int64_t save_summary_steps = 100;
  // Seeds what the Estimator randomises (stored in checkpoints as its RNG state). Unset: 0.
  std::optional<uint64_t> tf_random_seed;
  // Where the Estimator and its built-in hooks write their log lines (TensorFlow's INFO log);
  // null for silence. Must outlive the Estimator.
  std::ostream* log = nullptr;
  // Options of every input pipeline iterator the Estimator makes (thread budget, determinism),
  // the counterpart of TensorFlow's session_config for the input side.
  Options input_options;

  // Throws InvalidArgument, naming the field, for a negative period or count, for both
  // save_checkpoints_steps and save_checkpoints_secs set to non-zero values.
  void validate() const;
};

}  // namespace sluice
