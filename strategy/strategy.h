// Strategy: how a step runs over several replicas of a model, as tf.distribute.Strategy. run()
// calls a step function once per replica, concurrently, each with its ReplicaContext; reduce() and
// batch_reduce_to() combine per-replica values; the dataset methods hand each replica its share of
// the input. Concrete strategies: OneDeviceStrategy, MirroredStrategy, MultiWorkerMirroredStrategy.
//
// A strategy owns a thread budget (an arena of `threads` threads): run(), execute() and the
// reductions use only those threads, so replicas and the parallel loops inside them never
// oversubscribe the machine. Replicas are tasks, not threads: n replicas on fewer threads take
// turns, a replica waiting in a collective frees its thread for the others. (Builds under
// AddressSanitizer or ThreadSanitizer give each replica a thread instead: strategy.cc says why.)
//
// Thread safety: one run()/execute() at a time per strategy.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/core/element_range.h"
#include "sluice/core/tensor.h"
#include "sluice/strategy/auto_shard.h"
#include "sluice/strategy/distributed_dataset.h"
#include "sluice/strategy/input_context.h"
#include "sluice/strategy/replica_context.h"
#include "sluice/strategy/worker_parts.h"

namespace sluice {

class Dataset;

// Values with one entry per replica, indexed by replica id (tf.distribute's PerReplica).
template <class T>
using PerReplica = std::vector<T>;

class Strategy {
 public:
  virtual ~Strategy();
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;

  // "OneDeviceStrategy", "MirroredStrategy".
  virtual std::string_view name() const = 0;
  // Replicas over all workers: num_workers() × num_local_replicas().
  int num_replicas_in_sync() const { return num_replicas_ * num_workers_; }
  // Replicas in this process: the ones run() calls.
  int num_local_replicas() const { return num_replicas_; }
  // The cluster (tf.distribute's cluster_resolver): worker processes, this one's index (its MPI
  // rank) and whether it is the chief (worker 0, which alone writes checkpoints and summaries).
  // One worker except for MultiWorkerMirroredStrategy.
  int num_workers() const { return num_workers_; }
  int worker_index() const { return worker_index_; }
  bool is_chief() const { return worker_index_ == 0; }

  // Cross-worker collectives, called by every worker in the same order (identity with one
  // worker). all_reduce_across_workers sums float32 tensors (or doubles) in place, in worker order,
  // so the result is bit-identical on every worker; broadcast_from_chief copies the chief's values
  // everywhere; barrier returns once every worker called it. Errors: a worker that does not arrive
  // in time or died → Internal naming it. The tensors written are passed by address: a copy of a
  // one-element tensor holds its own value (core/tensor.h), so writing a copy would be lost.
  virtual void all_reduce_across_workers(const std::vector<Tensor*>& tensors);
  virtual void all_reduce_across_workers(std::vector<double>& values);
  virtual void broadcast_from_chief(const std::vector<Tensor*>& tensors);
  void barrier();
  // Whether `mine` holds on any worker: for a decision every worker must act on together that
  // each makes alone, such as one by its own process's clock. A collective like the others.
  bool on_any_worker(bool mine);
  // all_reduce_across_workers in two halves, for an update that each worker applies to its own
  // share of the weights. reduce_scatter_across_workers brings each worker every worker's values
  // of its worker_share of each float32 tensor, and leaves their sum to the caller: parts[i] holds
  // where they are (worker_parts.h), until the next reduce_scatter_across_workers, to be added up
  // with add_in_worker_order slice by slice right before the update reads them, while in cache,
  // as the all-reduce would have added them. A tensor too small to be worth dividing is every
  // worker's whole share: it is summed whole, and its parts[i] is empty, as every tensor's is
  // with one worker. all_gather_across_workers copies each worker's share of each tensor to
  // every other worker. Shares are whole blocks of kShareAlignment elements (the last one
  // shorter), so that a share is whole slices of an Optimizer's update. Errors as
  // all_reduce_across_workers.
  static constexpr int64_t kShareAlignment = int64_t{1} << 14;
  virtual std::vector<WorkerParts<float>> reduce_scatter_across_workers(
      const std::vector<Tensor*>& tensors);
  virtual void all_gather_across_workers(const std::vector<Tensor*>& tensors);
  virtual ElementRange worker_share(int64_t elements) const;
  // Moves the float32 `tensors` (of the same shapes on every worker, their values kept) into
  // memory the other workers read in place, when every worker runs on this host: a
  // reduce_scatter_across_workers of them then copies nothing, and its parts point into the other
  // workers' tensors once every worker has arrived. So between a reduce_scatter_across_workers and
  // the all_gather_across_workers that follows it, a worker writes only its own share of them.
  // Only tensors worth dividing into shares move. Returns whether any did: false with one worker,
  // across hosts, or when the host's shared memory has no room, and the collectives then copy as
  // before. A collective.
  virtual bool share_with_workers(const std::vector<Tensor*>& tensors);
  // The thread budget this strategy's work runs on.
  int num_threads() const { return threads_; }

  // Calls fn once per replica, concurrently, and returns each replica's result. Exceptions: when
  // replicas throw, run waits for all of them to stop and rethrows the error of the lowest replica
  // id that failed on its own (not one Cancelled because another failed).
  using StepFn = std::function<std::vector<Tensor>(ReplicaContext&)>;
  using StepFnWithInput = std::function<std::vector<Tensor>(ReplicaContext&, const Element&)>;
  PerReplica<std::vector<Tensor>> run(const StepFn& fn);
  // fn(context, per_replica_inputs[replica id]). Throws InvalidArgument unless there is exactly one
  // input per replica.
  PerReplica<std::vector<Tensor>> run(const StepFnWithInput& fn,
                                      const PerReplica<Element>& per_replica_inputs);

  // Combines one value per replica (axis=None): the element-wise SUM or MEAN in replica order.
  // Throws InvalidArgument for a count other than num_replicas_in_sync, non-float32 values or
  // shapes that disagree.
  Tensor reduce(ReduceOp op, const PerReplica<Tensor>& values);
  // The same for lists (each replica gives its list; the result has one tensor per position).
  std::vector<Tensor> reduce(ReduceOp op, const PerReplica<std::vector<Tensor>>& values);
  // The cross-replica all-reduce of tf.distribute's batch_reduce_to, writing into existing tensors:
  // destinations[i] = Σ_r values[r][i] (or the mean), summed in replica order so the result does
  // not depend on threads. Destinations may be any of the inputs (e.g. replica 0's gradients): each
  // element is read from every replica before it is written. Runs in parallel on the strategy's
  // threads. Throws InvalidArgument as reduce(), or when destinations do not match the values'
  // shapes.
  // Destinations are passed by address, as the collectives' tensors.
  void batch_reduce_to(ReduceOp op, const PerReplica<std::vector<Tensor>>& values,
                       const std::vector<Tensor*>& destinations);
  // Copies each source into the same position of every destination list (e.g. replica 0's updated
  // weights into the other replicas), in parallel on the strategy's threads. Throws InvalidArgument
  // for shapes or dtypes that disagree.
  void broadcast_to(const std::vector<Tensor>& sources,
                    const std::vector<std::vector<Tensor*>>& destinations);

  // Runs fn on the strategy's threads (parallel loops inside it use that budget).
  void execute(const std::function<void()>& fn);

  // Checks, before anything runs, that this strategy can run `dataset`: its elements are global
  // batches, or each one replica's batch when `per_replica_batches`. The base accepts every batch
  // shape; TPUStrategy requires what a TPU does. Both dataset methods below call it. Throws
  // InvalidArgument.
  virtual void validate_input(const Dataset& dataset, bool per_replica_batches) const;

  // Each element of `dataset` is a global batch; every step gives each replica its part
  // (split_batch's rule, a short last batch included). With several workers the dataset is first
  // auto-sharded by `policy` (strategy/auto_shard.h), and the decision logged on stderr: kFile
  // has each worker read its own files (shard_by_files; InvalidArgument when it cannot), kData
  // keep its slice of every global batch, kAuto is kFile where it can be and kData otherwise, and
  // kOff keeps whole batches (every worker sees all the data).
  DistributedDataset experimental_distribute_dataset(
      const Dataset& dataset, AutoShardPolicy policy = AutoShardPolicy::kAuto) const;
  // Calls fn once (one input pipeline in this process) with the InputContext: with several workers
  // num_input_pipelines = num_workers() and input_pipeline_id = worker_index(), so fn shards its
  // own input (Dataset::shard or shard_files). fn must batch with the per-replica size
  // (InputContext::get_per_replica_batch_size). Each step deals one of its elements to each local
  // replica in turn. Errors of fn propagate.
  DistributedDataset distribute_datasets_from_function(
      const std::function<Dataset(const InputContext&)>& fn) const;

 protected:
  // Throws InvalidArgument for num_replicas < 1 or threads < 0 (0: ThreadBudget::current()).
  Strategy(int num_replicas, int threads);
  // For a strategy spanning several worker processes. Throws InvalidArgument unless
  // 0 <= worker_index < num_workers.
  void set_cluster(int num_workers, int worker_index);

 private:
  struct Impl;
  int num_workers_ = 1;
  int worker_index_ = 0;
  int num_replicas_;
  int threads_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice
