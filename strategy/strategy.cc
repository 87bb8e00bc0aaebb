// The Strategy base: the replica group whose all-reduce every strategy uses, running a step on
// each replica, reductions, and the input validation every strategy shares. One file because the
// replica group is private to it; about 500 lines.
#include "sluice/strategy/strategy.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/core/threads.h"
#include "sluice/dataset/dataset.h"

// How replicas wait in a collective. Normally they are oneTBB resumable tasks: a waiting replica
// suspends, and its thread runs other replicas, so n replicas share the strategy's threads. The
// sanitizers cannot follow the stack switches of a suspension (ThreadSanitizer crashes,
// AddressSanitizer reports an exception thrown after one as a stack overflow), so sanitizer builds
// give each replica a thread of its own that waits on a condition variable instead: the same
// collectives and results, without the thread budget.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLUICE_REPLICA_THREADS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SLUICE_REPLICA_THREADS 1
#endif
#endif
#ifndef SLUICE_REPLICA_THREADS
#define SLUICE_REPLICA_THREADS 0
#endif

#if !SLUICE_REPLICA_THREADS && !__TBB_RESUMABLE_TASKS
#error "strategy/ needs oneTBB resumable tasks (tbb::task::suspend) for its collectives"
#endif

namespace sluice {
namespace {

// Each worker says how it reads its share, as tf.data logs its auto-shard decision.
void log_auto_shard(const std::string& decision) { std::fprintf(stderr, "%s\n", decision.c_str()); }

// Elements per parallel work item of a reduction or copy: large enough to amortise scheduling,
// small enough to balance a few big tensors over the threads.
constexpr int64_t kChunk = 1 << 15;
// Elements summed through a stack buffer at a time, so destinations may alias any input.
constexpr int64_t kBlock = 256;

// Checks that every replica gave float32 tensors of the same shapes as replica 0, in the same
// number; `what` names the operation in the message.
void check_per_replica(const PerReplica<std::vector<const Tensor*>>& values, int num_replicas,
                       std::string_view what) {
  if (static_cast<int>(values.size()) != num_replicas) {
    throw InvalidArgument(
        str_cat(what, ": got values from ", values.size(), " replicas, expected ", num_replicas));
  }
  const auto& first = values[0];
  for (size_t r = 0; r < values.size(); ++r) {
    if (values[r].size() != first.size()) {
      throw InvalidArgument(str_cat(what, ": replica ", r, " gave ", values[r].size(),
                                    " tensors but replica 0 gave ", first.size()));
    }
    for (size_t i = 0; i < first.size(); ++i) {
      const Tensor& t = *values[r][i];
      if (t.dtype() != DType::kFloat32) {
        throw InvalidArgument(str_cat(what, ": tensor ", i, " of replica ", r, " is ",
                                      dtype_name(t.dtype()), ", only float32 is reduced"));
      }
      if (t.shape() != first[i]->shape()) {
        throw InvalidArgument(str_cat(what, ": tensor ", i, " of replica ", r, " has shape ",
                                      t.shape().to_string(), " but replica 0's has ",
                                      first[i]->shape().to_string()));
      }
    }
  }
}

struct WorkItem {
  size_t tensor;
  int64_t begin, end;
};

std::vector<WorkItem> make_chunks(const std::vector<int64_t>& sizes) {
  std::vector<WorkItem> chunks;
  for (size_t i = 0; i < sizes.size(); ++i) {
    for (int64_t b = 0; b < sizes[i]; b += kChunk)
      chunks.push_back({i, b, std::min(sizes[i], b + kChunk)});
  }
  return chunks;
}

std::vector<Tensor*> addresses(std::vector<Tensor>& tensors) {
  std::vector<Tensor*> out;
  for (Tensor& t : tensors) out.push_back(&t);
  return out;
}

// destinations[i] = Σ_r values[r][i] (÷ n for kMean), each element summed in replica order.
// REQUIRES: check_per_replica passed and destinations match. Runs parallel loops on the calling
// thread's arena.
void reduce_into(ReduceOp op, const PerReplica<std::vector<const Tensor*>>& values,
                 const std::vector<Tensor*>& destinations) {
  const size_t n = values.size();
  std::vector<int64_t> sizes;
  for (const Tensor* d : destinations) sizes.push_back(d->num_elements());
  const std::vector<WorkItem> chunks = make_chunks(sizes);
  const float count = static_cast<float>(n);
  auto work = [&](const WorkItem& c) {
    float* out = destinations[c.tensor]->data<float>();
    std::vector<const float*> in(n);
    for (size_t r = 0; r < n; ++r)
      in[r] = static_cast<const float*>(values[r][c.tensor]->raw_data());
    float block[kBlock];
    for (int64_t b = c.begin; b < c.end; b += kBlock) {
      const int64_t len = std::min(kBlock, c.end - b);
      for (int64_t j = 0; j < len; ++j) block[j] = in[0][b + j];
      for (size_t r = 1; r < n; ++r) {
        const float* src = in[r] + b;
        for (int64_t j = 0; j < len; ++j) block[j] += src[j];
      }
      if (op == ReduceOp::kMean) {
        for (int64_t j = 0; j < len; ++j) block[j] /= count;
      }
      std::memcpy(out + b, block, static_cast<size_t>(len) * sizeof(float));
    }
  };
  if (chunks.size() <= 1) {
    for (const WorkItem& c : chunks) work(c);
    return;
  }
  oneapi::tbb::parallel_for(oneapi::tbb::blocked_range<size_t>(0, chunks.size(), 1),
                            [&](const oneapi::tbb::blocked_range<size_t>& range) {
                              for (size_t k = range.begin(); k != range.end(); ++k) work(chunks[k]);
                            });
}

PerReplica<std::vector<const Tensor*>> pointers(const PerReplica<std::vector<Tensor>>& values) {
  PerReplica<std::vector<const Tensor*>> out(values.size());
  for (size_t r = 0; r < values.size(); ++r) {
    for (const Tensor& t : values[r]) out[r].push_back(&t);
  }
  return out;
}

}  // namespace

namespace internal {

// The collectives of one Strategy::run call. A replica entering all_reduce before the others
// suspends its task (oneTBB resumable tasks), which frees its thread to run the other replicas: a
// blocking wait could deadlock when there are more replicas than threads. The last replica to
// arrive reduces and resumes the others. A replica that fails, or returns while others wait in a
// collective, breaks the group so that no replica waits forever.
class ReplicaGroup {
 public:
  explicit ReplicaGroup(int num_replicas) : n_(num_replicas), inputs_(num_replicas) {}

  std::vector<Tensor> all_reduce(int replica, ReduceOp op, const std::vector<Tensor>& values) {
    std::unique_lock<std::mutex> lock(mu_);
    throw_if_broken();
    if (finished_ > 0) {
      break_locked(
          str_cat("replica ", replica, " called all_reduce #", round_ + 1, " but ", finished_,
                  " replica(s) already returned from the step function "
                  "without calling it; every replica must make the same "
                  "collective calls"),
          true);
      throw_if_broken();
    }
    inputs_[replica] = &values;
    const int64_t my_round = round_;
    if (++arrived_ < n_) {
#if SLUICE_REPLICA_THREADS
      resumed_.wait(lock, [&] { return completed_ > my_round || broken_; });
#else
      oneapi::tbb::task::suspend([&](oneapi::tbb::task::suspend_point point) {
        waiters_.push_back(point);
        lock.unlock();
      });
      lock.lock();
#endif
      if (completed_ > my_round) return result_;
      throw_if_broken();
      throw Internal("all_reduce resumed before its round completed");
    }
    // Last to arrive: every other replica is suspended, so the inputs are stable.
    lock.unlock();
    std::vector<Tensor> result;
    std::string invalid;
    try {
      PerReplica<std::vector<const Tensor*>> in(n_);
      for (int r = 0; r < n_; ++r) {
        for (const Tensor& t : *inputs_[r]) in[r].push_back(&t);
      }
      check_per_replica(in, n_, "all_reduce");
      for (const Tensor* t : in[0]) result.emplace_back(DType::kFloat32, t->shape());
      reduce_into(op, in, addresses(result));
    } catch (const InvalidArgument& e) {
      invalid = e.what();
    }
    lock.lock();
    if (!invalid.empty()) {
      break_locked(invalid, true);
      throw_if_broken();
    }
    result_ = std::move(result);
    completed_ = my_round + 1;
    ++round_;
    arrived_ = 0;
    std::fill(inputs_.begin(), inputs_.end(), nullptr);
    resume_all_locked();
    return result_;
  }

  // The step function of `replica` returned.
  void finished(int replica) {
    std::lock_guard<std::mutex> lock(mu_);
    ++finished_;
    if (arrived_ > 0 && !broken_) {
      break_locked(str_cat("replica ", replica, " returned from the step function while ", arrived_,
                           " replica(s) wait in all_reduce #", round_ + 1,
                           "; every replica must make the same collective calls"),
                   true);
    }
  }

  // The step function of `replica` threw.
  void failed(int replica, const std::string& message) {
    std::lock_guard<std::mutex> lock(mu_);
    ++finished_;
    if (!broken_) break_locked(str_cat("replica ", replica, " failed: ", message), false);
  }

 private:
  void break_locked(std::string reason, bool invalid_argument) {
    broken_ = true;
    invalid_argument_ = invalid_argument;
    reason_ = std::move(reason);
    resume_all_locked();
  }
  void resume_all_locked() {
#if SLUICE_REPLICA_THREADS
    resumed_.notify_all();
#else
    for (auto& point : waiters_) oneapi::tbb::task::resume(point);
    waiters_.clear();
#endif
  }
  void throw_if_broken() const {
    if (!broken_) return;
    if (invalid_argument_) throw InvalidArgument(reason_);
    throw Cancelled("all_reduce cancelled: " + reason_);
  }

  std::mutex mu_;
  const int n_;
  int arrived_ = 0;
  int finished_ = 0;
  int64_t round_ = 0;      // The collective being gathered (0-based).
  int64_t completed_ = 0;  // Rounds whose result is available.
  bool broken_ = false;
  bool invalid_argument_ = false;
  std::string reason_;
  std::vector<const std::vector<Tensor>*> inputs_;
#if SLUICE_REPLICA_THREADS
  std::condition_variable resumed_;
#else
  std::vector<oneapi::tbb::task::suspend_point> waiters_;
#endif
  std::vector<Tensor> result_;
};

}  // namespace internal

std::vector<Tensor> ReplicaContext::all_reduce(ReduceOp op, const std::vector<Tensor>& values) {
  if (num_replicas_ == 1 || group_ == nullptr) {
    PerReplica<std::vector<const Tensor*>> in(1);
    for (const Tensor& t : values) in[0].push_back(&t);
    check_per_replica(in, 1, "all_reduce");
    // One replica: the sum is the value itself; a copy keeps the caller's tensors its own.
    std::vector<Tensor> out;
    for (const Tensor& t : values) out.push_back(t.clone());
    return out;
  }
  return group_->all_reduce(replica_id_, op, values);
}

Tensor ReplicaContext::all_reduce(ReduceOp op, const Tensor& value) {
  return all_reduce(op, std::vector<Tensor>{value})[0];
}

struct Strategy::Impl {
  explicit Impl(int threads) : arena(threads) {}
  oneapi::tbb::task_arena arena;
};

Strategy::Strategy(int num_replicas, int threads) : num_replicas_(num_replicas), threads_(threads) {
  if (num_replicas < 1) {
    throw InvalidArgument(str_cat("a strategy needs at least 1 replica, got ", num_replicas));
  }
  if (threads < 0) throw InvalidArgument(str_cat("thread budget must be >= 0, got ", threads));
  if (threads_ == 0) threads_ = ThreadBudget::current();
  impl_ = std::make_unique<Impl>(threads_);
}

Strategy::~Strategy() = default;

void Strategy::set_cluster(int num_workers, int worker_index) {
  if (num_workers < 1 || worker_index < 0 || worker_index >= num_workers) {
    throw InvalidArgument(
        str_cat("worker index ", worker_index, " is outside [0, ", num_workers, ")"));
  }
  num_workers_ = num_workers;
  worker_index_ = worker_index;
}

// One worker: the sums are the values themselves and the chief's values are everyone's.
void Strategy::all_reduce_across_workers(const std::vector<Tensor*>&) {}
void Strategy::all_reduce_across_workers(std::vector<double>&) {}
void Strategy::broadcast_from_chief(const std::vector<Tensor*>&) {}
std::vector<WorkerParts<float>> Strategy::reduce_scatter_across_workers(
    const std::vector<Tensor*>& tensors) {
  return std::vector<WorkerParts<float>>(tensors.size());
}
void Strategy::all_gather_across_workers(const std::vector<Tensor*>&) {}
ElementRange Strategy::worker_share(int64_t elements) const { return {0, elements}; }
bool Strategy::share_with_workers(const std::vector<Tensor*>&) { return false; }

void Strategy::barrier() {
  if (num_workers_ == 1) return;
  std::vector<double> none;
  all_reduce_across_workers(none);
}

bool Strategy::on_any_worker(bool mine) {
  if (num_workers_ == 1) return mine;
  std::vector<double> votes{mine ? 1.0 : 0.0};
  all_reduce_across_workers(votes);
  return votes[0] > 0;
}

void Strategy::execute(const std::function<void()>& fn) { impl_->arena.execute(fn); }

PerReplica<std::vector<Tensor>> Strategy::run(const StepFn& fn) {
  return run([&](ReplicaContext& context, const Element&) { return fn(context); },
             PerReplica<Element>(num_replicas_));
}

PerReplica<std::vector<Tensor>> Strategy::run(const StepFnWithInput& fn,
                                              const PerReplica<Element>& per_replica_inputs) {
  const int n = num_replicas_;
  if (static_cast<int>(per_replica_inputs.size()) != n) {
    throw InvalidArgument(str_cat(name(), ".run: got ", per_replica_inputs.size(),
                                  " per-replica inputs for ", n, " replicas"));
  }
  PerReplica<std::vector<Tensor>> outputs(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<char> cancelled(n, 0);
  internal::ReplicaGroup group(n);
  auto body = [&](int r) {
    ReplicaContext context(r, n, n > 1 ? &group : nullptr);
    try {
      outputs[r] = fn(context, per_replica_inputs[r]);
      group.finished(r);
    } catch (const Cancelled& e) {
      errors[r] = std::current_exception();
      cancelled[r] = 1;
      group.failed(r, e.what());
    } catch (const std::exception& e) {
      errors[r] = std::current_exception();
      group.failed(r, e.what());
    } catch (...) {
      errors[r] = std::current_exception();
      group.failed(r, "unknown exception");
    }
  };
#if SLUICE_REPLICA_THREADS
  if (n == 1) {
    impl_->arena.execute([&] { body(0); });
  } else {
    // A thread per replica (see SLUICE_REPLICA_THREADS), replica 0 on the caller's.
    std::vector<std::thread> threads;
    for (int r = 1; r < n; ++r) threads.emplace_back([&body, r] { body(r); });
    body(0);
    for (std::thread& t : threads) t.join();
  }
#else
  impl_->arena.execute([&] {
    if (n == 1) {
      body(0);
      return;
    }
    oneapi::tbb::task_group tasks;
    for (int r = 1; r < n; ++r) tasks.run([&body, r] { body(r); });
    body(0);
    tasks.wait();
  });
#endif
  // The root cause first: a replica that failed on its own, then any Cancelled one.
  for (int r = 0; r < n; ++r) {
    if (errors[r] && !cancelled[r]) std::rethrow_exception(errors[r]);
  }
  for (int r = 0; r < n; ++r) {
    if (errors[r]) std::rethrow_exception(errors[r]);
  }
  return outputs;
}

Tensor Strategy::reduce(ReduceOp op, const PerReplica<Tensor>& values) {
  PerReplica<std::vector<Tensor>> lists;
  for (const Tensor& t : values) lists.push_back({t});
  return reduce(op, lists)[0];
}

std::vector<Tensor> Strategy::reduce(ReduceOp op, const PerReplica<std::vector<Tensor>>& values) {
  const auto in = pointers(values);
  check_per_replica(in, num_replicas_, str_cat(name(), ".reduce"));
  std::vector<Tensor> out;
  for (const Tensor* t : in[0]) out.emplace_back(DType::kFloat32, t->shape());
  impl_->arena.execute([&] { reduce_into(op, in, addresses(out)); });
  return out;
}

void Strategy::batch_reduce_to(ReduceOp op, const PerReplica<std::vector<Tensor>>& values,
                               const std::vector<Tensor*>& destinations) {
  const auto in = pointers(values);
  check_per_replica(in, num_replicas_, str_cat(name(), ".batch_reduce_to"));
  if (destinations.size() != in[0].size()) {
    throw InvalidArgument(str_cat(name(), ".batch_reduce_to: ", destinations.size(),
                                  " destinations for ", in[0].size(), " values"));
  }
  for (size_t i = 0; i < destinations.size(); ++i) {
    if (destinations[i]->dtype() != DType::kFloat32 ||
        destinations[i]->shape() != in[0][i]->shape()) {
      throw InvalidArgument(str_cat(name(), ".batch_reduce_to: destination ", i, " is ",
                                    dtype_name(destinations[i]->dtype()),
                                    destinations[i]->shape().to_string(), ", expected float32",
                                    in[0][i]->shape().to_string()));
    }
  }
  if (num_replicas_ == 1 && op == ReduceOp::kSum) {
    // One replica: only a copy, and none when the destination is the value itself.
    for (size_t i = 0; i < destinations.size(); ++i) {
      if (destinations[i]->raw_data() != in[0][i]->raw_data()) {
        std::memcpy(destinations[i]->raw_data(), in[0][i]->raw_data(),
                    destinations[i]->byte_size());
      }
    }
    return;
  }
  impl_->arena.execute([&] { reduce_into(op, in, destinations); });
}

void Strategy::broadcast_to(const std::vector<Tensor>& sources,
                            const std::vector<std::vector<Tensor*>>& destinations) {
  std::vector<int64_t> sizes;
  for (const Tensor& s : sources) sizes.push_back(static_cast<int64_t>(s.byte_size()));
  for (size_t d = 0; d < destinations.size(); ++d) {
    if (destinations[d].size() != sources.size()) {
      throw InvalidArgument(str_cat(name(), ".broadcast_to: destination list ", d, " has ",
                                    destinations[d].size(), " tensors for ", sources.size(),
                                    " sources"));
    }
    for (size_t i = 0; i < sources.size(); ++i) {
      const Tensor& t = *destinations[d][i];
      if (t.dtype() != sources[i].dtype() || t.shape() != sources[i].shape() ||
          t.dtype() == DType::kString) {
        throw InvalidArgument(str_cat(name(), ".broadcast_to: destination ", d, "/", i, " is ",
                                      dtype_name(t.dtype()), t.shape().to_string(), ", source is ",
                                      dtype_name(sources[i].dtype()),
                                      sources[i].shape().to_string()));
      }
    }
  }
  // Work items: (destination list, byte chunk of a source).
  const std::vector<WorkItem> chunks = make_chunks(sizes);
  const size_t items = chunks.size() * destinations.size();
  auto copy = [&](size_t k) {
    const WorkItem& c = chunks[k % chunks.size()];
    Tensor& dst = *destinations[k / chunks.size()][c.tensor];
    if (dst.raw_data() == sources[c.tensor].raw_data()) return;
    std::memcpy(static_cast<char*>(dst.raw_data()) + c.begin,
                static_cast<const char*>(sources[c.tensor].raw_data()) + c.begin,
                static_cast<size_t>(c.end - c.begin));
  };
  if (items == 0) return;
  impl_->arena.execute([&] {
    oneapi::tbb::parallel_for(oneapi::tbb::blocked_range<size_t>(0, items, 1),
                              [&](const oneapi::tbb::blocked_range<size_t>& range) {
                                for (size_t k = range.begin(); k != range.end(); ++k) copy(k);
                              });
  });
}

void Strategy::validate_input(const Dataset& dataset, bool per_replica_batches) const {
  (void)dataset;
  (void)per_replica_batches;
}

DistributedDataset Strategy::experimental_distribute_dataset(const Dataset& dataset,
                                                             AutoShardPolicy policy) const {
  validate_input(dataset, /*per_replica_batches=*/false);
  if (num_workers_ == 1 || policy == AutoShardPolicy::kOff) {
    return DistributedDataset(dataset, num_replicas_, /*split=*/true);
  }
  std::string why_not_file;
  if (policy != AutoShardPolicy::kData) {
    try {
      FileSharding sharded = shard_by_files(dataset, num_workers_, worker_index_);
      log_auto_shard(sharded.decision);
      return DistributedDataset(std::move(sharded.dataset), num_replicas_, /*split=*/true,
                                sharded.decision);
    } catch (const InvalidArgument& e) {
      if (policy == AutoShardPolicy::kFile) throw;
      why_not_file = e.what();
    }
  }
  std::string decision = str_cat("auto-shard DATA: worker ", worker_index_, " of ", num_workers_,
                                 " reads the whole input and keeps its rows of each global batch");
  if (!why_not_file.empty()) decision += str_cat(" (", why_not_file, ")");
  log_auto_shard(decision);
  return DistributedDataset(shard_global_batches(dataset, num_workers_, worker_index_),
                            num_replicas_, /*split=*/true, decision);
}

DistributedDataset Strategy::distribute_datasets_from_function(
    const std::function<Dataset(const InputContext&)>& fn) const {
  const InputContext context(num_workers_, worker_index_, num_replicas_in_sync());
  Dataset dataset = fn(context);
  validate_input(dataset, /*per_replica_batches=*/true);
  return DistributedDataset(std::move(dataset), num_replicas_, /*split=*/false);
}

}  // namespace sluice
