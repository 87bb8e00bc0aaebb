// ReplicatedModel: the one place a training or evaluation step runs, for every strategy and for
// none (RunConfig::train_distribute / eval_distribute; without one, a OneDeviceStrategy: one local
// replica), so the Estimator, and any loop built on it, has a single step path. Replica 0 is the
// Estimator's own model; the others are built
// by ModelSpec::model_fn and start from replica 0's weights. A training step splits the global
// batch across the replicas and runs forward and backward on each concurrently with the loss
// divided by the GLOBAL batch (compute_average_loss). The update then sums the gradients over
// replicas (in replica order) into replica 0's, adds the L2 regularization gradient once, and the
// optimizer applies the result; the updated weights are copied to the other replicas, so every
// replica holds identical trainable weights after every step. Summing, regularization, update and
// copy run slice by slice in one pass over the weights on the strategy's threads, each slice
// finished while in cache: for a large model the step's cost outside forward and backward is
// that of reading the weights and their gradients once. Batch-normalization statistics stay per
// replica, as Keras' ON_READ / MEAN moving averages: a checkpoint stores their mean over replicas.
//
// Under MultiWorkerMirroredStrategy each worker process holds its local replicas and feeds them
// its LOCAL batch (its auto-shard of the input); the loss is divided by the global batch (the
// rows of every worker this step), the local gradient sum is then summed over workers in worker
// order, and every worker regularizes and applies the same update, so weights stay identical
// everywhere (the chief's initial weights are broadcast when the replicas are built). Metrics and
// statistics stay per worker (a checkpoint, written by the chief, stores the chief's).
//
// When the workers agree to it, the update is sharded (as ZeRO's first stage): the sum over
// workers leaves each worker the summed gradients of only its share of each large weight
// (Strategy::worker_share), each worker updates only that share, and the new weights are then
// gathered from their owners. Every element is summed and updated exactly as the whole
// update would, so the weights are bit-identical to it, while each worker reads and writes only
// its share of the weights, gradients and optimizer slots. The optimizer's slots are then current
// only in each worker's share until gather_optimizer_state.
//
// Not thread-safe; owned by the Estimator. The strategy must outlive it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/model/losses.h"
#include "sluice/model/metrics.h"
#include "sluice/model/optimizers.h"
#include "sluice/model/sequential.h"
#include "sluice/strategy/worker_parts.h"

namespace sluice {

class Strategy;  // strategy/strategy.h

class ReplicatedModel {
 public:
  // Builds num_local_replicas − 1 extra models with model_fn and copies `primary`'s parameters
  // into them (after receiving the chief's when there are several workers). Throws InvalidArgument
  // when more than one replica is needed and model_fn is empty, or when it builds a model whose
  // parameters differ from primary's in number, path or shape.
  ReplicatedModel(Strategy& strategy, Sequential& primary,
                  const std::function<Sequential()>& model_fn);
  ~ReplicatedModel();

  Strategy& strategy() { return strategy_; }
  int num_replicas() const { return static_cast<int>(models_.size()); }
  Sequential& model(int replica) { return *models_.at(replica); }

  // Copies every parameter (weights and statistics) of replica 0 into the others, e.g. after a
  // checkpoint was restored into replica 0.
  void sync_from_primary();

  struct StepResult {
    double loss = 0;         // Σ over replicas of (loss / global batch); the global-batch mean.
    int64_t batch_size = 0;  // Rows of the global batch (over every worker).
  };

  // Keeps workers in lock step: each calls this once before every step with its local batch's
  // rows, or nullopt when its input ended. Returns false on every worker as soon as any worker's
  // input ended (the step count is the smallest over workers), so none waits in a collective for
  // one that stopped; otherwise remembers the global batch's rows for the next train_step. That
  // step's update is sharded when every worker says `shardable`: it will not read the step's
  // gradients (finish_gradients), and it calls gather_optimizer_state at the same steps as the
  // others. One worker: returns whether local_rows is set, without communication.
  bool all_workers_have_input(std::optional<int64_t> local_rows, bool shardable = false);

  // Forward and backward of one global batch on every replica, each replica's gradients (of the
  // loss only) in its own parameters; apply_gradients or finish_gradients then combines them.
  // Metrics (reset by the caller when wanted) are updated with every replica's rows. Errors of a
  // replica propagate.
  StepResult train_step(const Element& batch, const std::string& features_key,
                        const std::string& labels_key, const Loss& loss,
                        const std::vector<std::unique_ptr<Metric>>& metrics);
  // Before training, once: moves replica 0's trainable gradients where the other workers read
  // their shares in place when every worker runs on one host (Strategy::share_with_workers), so
  // that a sharded update's reduce-scatter copies nothing. A collective with several workers.
  // Returns whether they were moved, now or by an earlier call.
  bool share_gradients_with_workers();

  // Makes replica 0's trainable gradients the step's final ones without updating anything: the sum
  // over replicas (and workers) plus the L2 regularization gradient. For readers of gradients
  // before the update (a hook's gradient norm); apply_gradients then does not redo it. Throws
  // FailedPrecondition after a step whose update the workers agreed to shard.
  void finish_gradients();
  // The update of a training step, in one pass over slices of the weights on the strategy's
  // threads: each slice of replica 0's gradients is finished (unless finish_gradients did), the
  // optimizer applies it and the new weights are copied to the other replicas while in cache.
  // Every replica then holds replica 0's updated weights, whose gradients stay the final ones
  // (after a sharded update, in this worker's share only). Returns the step's regularization loss
  // (Σ l2·Σ w² at the weights before the update).
  double apply_gradients(Optimizer& optimizer);
  // Makes the optimizer's slots current on every worker after sharded updates left each worker's
  // current in its share only: a collective every worker calls at the same point (before a
  // checkpoint is saved, at the end of training). Does nothing when they are current.
  void gather_optimizer_state(Optimizer& optimizer);

  // Inference on every replica's share of the batch; returns the summed (global-mean) loss and
  // updates the metrics.
  double eval_step(const Element& batch, const std::string& features_key,
                   const std::string& labels_key, const Loss& loss,
                   const std::vector<std::unique_ptr<Metric>>& metrics);

  // The statistics (e.g. BatchNormalization moving averages) averaged over replicas, keyed by
  // parameter path: what a checkpoint stores for them.
  std::map<std::string, Tensor> mean_statistics();
  // Every replica's own statistics, keyed "replica_<r>/<parameter path>" (empty with one
  // replica): saved beside their mean so that a resumed run gives each replica back its own and
  // continues exactly as a straight run would.
  std::map<std::string, Tensor> replica_statistics();
  // Copies such statistics back into their replicas; keys of replicas this model lacks, and of
  // parameters whose shape differs, are ignored.
  void load_replica_statistics(const std::map<std::string, Tensor>& statistics);

 private:
  class GradientFinisher;

  Strategy& strategy_;
  std::optional<int64_t> agreed_rows_;    // From all_workers_have_input, for the next step.
  bool shard_next_update_ = false;        // Likewise: every worker agreed to shard its update.
  bool gradients_sharded_ = false;        // Since the last train_step: its update is sharded.
  bool optimizer_state_sharded_ = false;  // Slots current in this worker's share only.
  std::optional<bool> gradients_shared_;  // Once share_gradients_with_workers decided.
  // After a sharded train_step, where the workers' values of this worker's shares are: its update
  // adds them up.
  std::vector<WorkerParts<float>> worker_parts_;
  // Since the last train_step: whether replica 0's gradients hold the sum over replicas, and
  // whether they are final (summed and regularized, by finish_gradients) with this loss.
  bool replicas_summed_ = true;
  std::optional<double> finished_regularization_;
  std::vector<Sequential*> models_;  // models_[0] is the primary (not owned).
  std::vector<std::unique_ptr<Sequential>> owned_;
};

}  // namespace sluice
