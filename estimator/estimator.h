// Estimator: the train / evaluate / predict loop of tf.estimator over a sluice model and input
// pipeline, with session hooks, checkpoints in model_dir (estimator/checkpoint.h) and TensorBoard
// summaries. An input_fn returns a Dataset of batches {features_key: float32 [batch, ...],
// labels_key: numeric [batch]}; the Estimator iterates it with a prefetch of 2 batches, so the
// pipeline produces the next batch while the model runs the current step.
//
//   Estimator est({make_preset("fashion-cnn"), Loss("nll_loss"), std::make_unique<Adam>(),
//                  {"accuracy"}},
//                 {.model_dir = "/tmp/fashion"});
//   est.train(train_input_fn, {}, /*steps=*/1000);
//   auto metrics = est.evaluate(eval_input_fn);   // {"accuracy", "loss", "global_step"}
//
// Every train/evaluate/predict call first restores the latest checkpoint of model_dir when there
// is one (so calls on one model_dir continue each other, across processes), else runs with the
// weights the model has. Not thread-safe: one call at a time; the model is owned by the Estimator.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/estimator/checkpoint.h"
#include "sluice/estimator/input_pipeline.h"
#include "sluice/estimator/prediction.h"
#include "sluice/estimator/run_config.h"
#include "sluice/estimator/session_run_hook.h"
#include "sluice/model/losses.h"
#include "sluice/model/metrics.h"
#include "sluice/model/optimizers.h"
#include "sluice/model/sequential.h"

namespace sluice {

class ReplicatedModel;  // estimator/replicated_model.h
class Strategy;         // strategy/strategy.h

// A compiled Keras model: what tf.keras.estimator.model_to_estimator takes.
struct ModelSpec {
  Sequential model;  // Built.
  Loss loss;
  std::unique_ptr<Optimizer> optimizer;
  // Keras metric names (model/metrics.h make_metric, "accuracy" chosen from the loss); results
  // are reported under these names.
  std::vector<std::string> metrics;
  std::string features_key = "image";
  std::string labels_key = "label";
  // Builds the same architecture as `model` (weights need not match: they are copied from it).
  // Required when RunConfig::train_distribute or eval_distribute has more than one replica; each
  // extra replica gets its own model from it.
  std::function<Sequential()> model_fn;
};

// evaluate()'s result: "loss", each metric by name, and "global_step".
using EvalResult = std::map<std::string, double>;

class Estimator;

// The input position a checkpoint (a state() map, or its "input/..." tensors) saved for worker
// `worker_index` of `num_workers`; nullopt when it saved none. Throws FailedPrecondition naming
// both counts when another number of workers saved it (their shares differ from this run's), and
// DataLoss when the worker's position is missing.
std::optional<std::string> saved_input_position(const TensorMap& checkpoint, int num_workers,
                                                int worker_index);

// predict()'s generator: one Prediction per example, in input order, until nullopt. Holds a
// reference to the Estimator, which must outlive it and not be used while it is iterated.
class Predictions {
 public:
  std::optional<Prediction> next();

 private:
  friend class Estimator;
  Predictions(Estimator& estimator, InputPipeline input)
      : estimator_(&estimator), input_(std::move(input)) {}
  Estimator* estimator_;
  InputPipeline input_;
  Tensor outputs_, features_, labels_;
  bool has_labels_ = false;
  int64_t index_ = 0, size_ = 0;
};

class Estimator {
 public:
  // Throws InvalidArgument for an invalid config, an unbuilt model or a missing optimizer.
  Estimator(ModelSpec spec, RunConfig config = {});
  // The model_fn form (tf.estimator.Estimator(model_fn=...)): `model_fn` builds the whole
  // ModelSpec — model, loss, optimizer, metrics; hyperparameters (TensorFlow's params) are what
  // it captures. It is called once here, and once more per extra replica of a distribution
  // strategy (for its model) unless the spec it returns has a model_fn of its own.
  explicit Estimator(const std::function<ModelSpec()>& model_fn, RunConfig config = {});
  ~Estimator();
  Estimator(Estimator&&) = delete;

  // Trains until `steps` more steps than the restored global step, until global step `max_steps`,
  // until the input ends, or until a hook requests stop (at most one of steps and max_steps; each
  // > 0, else InvalidArgument). With max_steps already reached by the latest checkpoint it logs
  // "Skipping training since max_steps has already saved." and returns at once, calling no hook.
  // Hooks (not owned; they must outlive the call) run after the Estimator's own, which are, in
  // TensorFlow's order: CheckpointSaverHook (from the RunConfig, unless `hooks` has one),
  // StepCounterHook, SummarySaverHook; after the user's: StopAtStepHook, NanLossHook (a NaN loss
  // throws NanLossDuringTrainingError), LoggingHook. Errors of the input or of a hook propagate.
  // With RunConfig::steps_per_execution = K the hooks see executions of K steps (run_config.h).
  // A strategy's validate_input checks the input_fn's dataset first (TPUStrategy: static batch).
  Estimator& train(const InputFn& input_fn, const std::vector<SessionRunHook*>& hooks = {},
                   std::optional<int64_t> steps = std::nullopt,
                   std::optional<int64_t> max_steps = std::nullopt);

  // Evaluates the latest checkpoint (or the current weights, saying so, when there is none) over
  // `steps` batches or the whole input: loss is the mean over examples (each batch's mean weighted
  // by its size, as Keras), each metric accumulates over every example. Under a multi-worker
  // eval_distribute each worker evaluates the input its input_fn gives it (its share) and the
  // loss and metrics are summed across workers, so all report the whole's. Writes one event at
  // the global step into model_dir/eval (model_dir/eval_<name> when named) and logs
  // "Saving dict for global step N: ...". Throws InvalidArgument for steps <= 0.
  EvalResult evaluate(const InputFn& input_fn, std::optional<int64_t> steps = std::nullopt,
                      const std::vector<SessionRunHook*>& hooks = {}, const std::string& name = "");

  // Restores like evaluate, then yields the model's output for every example of the input
  // (a batch dataset; the labels component is optional).
  Predictions predict(const InputFn& input_fn);

  // The global step of the model in memory (after the last call's restore and steps).
  int64_t global_step() const { return global_step_; }
  const RunConfig& config() const { return config_; }
  const std::string& model_dir() const { return config_.model_dir; }
  Sequential& model() { return spec_.model; }
  // The replicas of RunConfig::train_distribute (replica 0 is model()); null before the first
  // train() with a strategy.
  ReplicatedModel* train_replicas() { return train_replicas_.get(); }
  Optimizer& optimizer() { return *spec_.optimizer; }

  // The training state as checkpoint tensors: "global_step", "rng/seed", "model/<parameter
  // path>", "optimizer/<state key>", and with RunConfig::checkpoint_input_pipeline, while train()
  // runs on one worker with an input that can save its position, "input/state" (Iterator::save):
  // the next train() restores it into its input, so a resumed run reads on exactly where the
  // checkpoint was taken. With several workers the chief's checkpoints hold every worker's
  // position instead, "input/worker_<i>/state", and their number, "input/workers"
  // (saved_input_position). While train() runs with several workers and a sharded update
  // (ReplicatedModel), the optimizer's slots are current only in this worker's share: they are
  // gathered for every checkpoint and at the end of train().
  TensorMap state() const;
  // Restores a state() map. Throws NotFound naming a missing parameter, InvalidArgument for a
  // shape or dtype that disagrees with the model.
  void load_state(const TensorMap& state);

 private:
  friend class Predictions;
  class RunSession;

  // Restores the latest checkpoint if there is one; returns its path ("" when none).
  std::string restore_latest();
  // load_state(), the optimizer's slots then `state`'s tensors themselves when `take_slots`: for
  // a map read to be restored and then dropped.
  void load_state(const TensorMap& state, bool take_slots);
  // The input of input_fn, checked by `strategy`'s validate_input (of global batches) when given.
  InputPipeline make_input(const InputFn& input_fn, const Strategy* strategy = nullptr) const;
  std::string save_checkpoint();
  // state() without copies: the parameters' and slots' own tensors, which the next step changes.
  // For a checkpoint written before training goes on.
  TensorMap shared_state() const;
  void log(const std::string& line) const;

  ModelSpec spec_;
  RunConfig config_;
  CheckpointManager checkpoints_;
  std::vector<std::unique_ptr<Metric>> metrics_;
  int64_t global_step_ = 0;
  // The replicas that run every step, made on first use: of RunConfig::train_distribute /
  // eval_distribute, or one local replica on local_strategy_ without one.
  std::unique_ptr<ReplicatedModel> train_replicas_, eval_replicas_;
  std::unique_ptr<Strategy> local_strategy_;
  // Each replica's own statistics from the restored checkpoint, for replicas made after it.
  std::map<std::string, Tensor> replica_statistics_;
  // The input positions the restored checkpoint saved ("input/..." tensors), restored into the
  // next train() call's input; and that call's input while it runs, whose position state() saves.
  TensorMap restored_input_positions_;
  InputPipeline* training_input_ = nullptr;
  Strategy& train_strategy();
  Strategy& eval_strategy();
  Strategy& local_strategy();
  ReplicatedModel& replicas_for(std::unique_ptr<ReplicatedModel>& slot, Strategy& strategy);
};

}  // namespace sluice
