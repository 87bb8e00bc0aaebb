// The thread budget: how many threads sluice keeps busy. A process decides it once, by holding a
// ThreadBudget (the sluice command does, from --threads), and everything that runs work takes it
// from there: an iterator's arena (Options::threads unset), a strategy's (threads 0) and the
// model's parallel loops, which run in oneTBB's pool that the budget sizes. The library itself
// never changes process-wide oneTBB settings.
//
// Threads outside the budget, all of which block rather than compute: one feeder thread per
// parallel stage of a live iterator (it pulls the stage's input and waits for room), and TFRecord
// read-ahead threads (each waits on read()). The calling thread counts as the holder says: one
// that only consumes a pipeline waits on it, and the budget's threads are all workers; one that
// also trains or predicts computes, and it is one of them. So the threads computing at once are
// the budget's, plus a helper for the short moments one has work in hand (and, for a computing
// caller on a budget of one thread, the one worker its pipeline needs besides it).
#pragma once

#include <memory>

namespace sluice {

// The number of cores this process may run on (at least 1).
int default_thread_count();

class ThreadBudget {
 public:
  // What the thread holding the budget does while the work runs.
  enum class Caller {
    // It consumes a pipeline and waits for its elements. An input pipeline's consumer never works
    // in the pipeline's arena, so a pipeline of N threads needs N workers besides the caller.
    kWaits,
    // It also computes (a model's steps, on the caller and N - 1 workers), so the pool holds one
    // worker fewer: N workers would keep N + 1 threads busy on N cores, and the model's parallel
    // loops would wait on whichever of them the kernel preempted. At least one worker stays, as
    // the pipeline runs on workers only.
    kComputes,
  };

  // A budget of `threads` threads (0: default_thread_count()). While it lives, oneTBB's worker
  // pool holds `threads` workers, one fewer for a caller that computes. Budgets nest: one made
  // inside another can only narrow it, and the outer one returns when it ends. Create and destroy
  // budgets on one thread, in nested order.
  explicit ThreadBudget(int threads = 0, Caller caller = Caller::kWaits);
  ~ThreadBudget();
  ThreadBudget(const ThreadBudget&) = delete;
  ThreadBudget& operator=(const ThreadBudget&) = delete;

  int threads() const { return threads_; }

  // The threads of the innermost live budget, else default_thread_count(). (Without a live
  // budget, oneTBB's own default pool, one worker fewer than the cores, serves the arenas.)
  static int current();

 private:
  struct Control;
  int threads_;
  const ThreadBudget* outer_;
  std::unique_ptr<Control> control_;
};

}  // namespace sluice
