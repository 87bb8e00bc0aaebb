// MultiWorkerMirroredStrategy: synchronous training over several worker processes started by
// mpirun (Open MPI), each running MirroredStrategy-style local replicas, as
// tf.distribute.MultiWorkerMirroredStrategy. Gradients are summed over the local replicas, then
// over the workers with MPI in worker order, so every worker applies bit-identical updates.
//
//   mpirun -np 2 my_trainer      # each process: MultiWorkerMirroredStrategy strategy;
//
// The cluster is MPI_COMM_WORLD: worker index = rank, worker 0 is the chief. MPI is initialised
// (MPI_THREAD_SERIALIZED) by the first strategy unless the program did it, and finalised at exit.
// A worker that dies or stops answering makes the others fail instead of hanging: every
// collective polls non-blocking MPI calls against a deadline and throws Internal naming the
// worker that did not arrive; a process that leaves after such an error (or while an exception
// unwinds past a strategy) calls MPI_Abort at exit, so mpirun ends the whole job.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "sluice/strategy/strategy.h"

namespace sluice {

struct MultiWorkerOptions {
  int local_replicas = 1;  // Replicas in each process (>= 1).
  int threads = 0;         // Each process's thread budget (0: all cores).
  // How long a collective waits for the other workers before it fails (> 0). Generous by default:
  // a worker may legitimately be busy between steps (the chief writing a checkpoint, evaluation).
  double collective_timeout_seconds = 300;
  // Whether workers that all run on one host read each other's gradients in place, from the host's
  // shared memory (Strategy::share_with_workers), instead of receiving copies. Off, they exchange
  // messages as workers on different hosts do.
  bool share_memory_on_one_host = true;
};

class MultiWorkerMirroredStrategy final : public Strategy {
 public:
  // Joins the MPI job. Throws InvalidArgument for bad options, Internal when MPI fails.
  explicit MultiWorkerMirroredStrategy(const MultiWorkerOptions& options = {});
  ~MultiWorkerMirroredStrategy() override;

  std::string_view name() const override { return "MultiWorkerMirroredStrategy"; }
  double collective_timeout_seconds() const { return timeout_seconds_; }

  void all_reduce_across_workers(const std::vector<Tensor*>& tensors) override;
  void all_reduce_across_workers(std::vector<double>& values) override;
  void broadcast_from_chief(const std::vector<Tensor*>& tensors) override;
  std::vector<WorkerParts<float>> reduce_scatter_across_workers(
      const std::vector<Tensor*>& tensors) override;
  void all_gather_across_workers(const std::vector<Tensor*>& tensors) override;
  ElementRange worker_share(int64_t elements) const override;
  bool share_with_workers(const std::vector<Tensor*>& tensors) override;

 private:
  struct Comm;
  // The sums of the tensors too small to be divided into shares, packed into one all-reduce.
  void sum_undivided(const std::vector<Tensor*>& tensors, std::string_view what);
  std::unique_ptr<Comm> comm_;
  double timeout_seconds_;
};

}  // namespace sluice
