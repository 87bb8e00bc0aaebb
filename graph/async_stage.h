// AsyncStage: the flow-graph machinery behind every parallel stage (parallel map, map_and_batch,
// prefetch, parallel interleave). Internal to graph/.
//
// clang-format off
//   feeder thread ──try_put──► function_node (parallelism N) ──► sequencer_node ──► deliver ──► done
//   (pulls the input                runs `body` on a chunk        restores input       (serial)  queue
//    stage, serial)                                              order if deterministic
// clang-format on
//
// The feeder is a plain thread, as tf.data's runner thread: it is the only place that blocks on
// the input stage, so no oneTBB worker ever blocks waiting for another stage. All computation
// runs on the iterator's arena. The consumer pops finished chunks from the done queue.
//
// Buffering: at most `max_tasks` chunks and `max_elements` elements are in flight or finished
// but not yet taken by the consumer (plus the one chunk the consumer is reading from). A stage
// with a tuned knob also holds at most its share of Options::autotune.ram_budget in bytes (the
// outputs finished, and for tasks in flight their input count times the most bytes an input has
// made so far), except that it may always run one task: a share smaller than one task's output
// is exceeded by that task. It reports what it holds in its statistics (buffered_bytes).
//
// Tuned parallelism: the function node admits max_parallelism tasks at once, and the feeder
// hands it a task only while fewer than the tuned parallelism run, keeping the next task pulled
// and ready meanwhile (its input items, not yet counted in the bytes held). Order and saved
// state do not depend on it.
//
// The feeder starts on the first next() (as tf.data starts its threads on the first GetNext), so
// a fresh iterator has pulled nothing and can be restored. Saved state: saving pauses the feeder
// once it has handed on what it is pulling, waits for the tasks in flight to finish, and saves
// the finished items not yet taken (elements, or errors by code and message) in the order the
// consumer would take them, the count of input items pulled (the index map functions see), the
// body's own values (AsyncStageConfig::save) and the input's state; then the feeder resumes. The
// consumer stalls for the tasks in flight (about 1 ms each: adaptive tasks are sized so) plus
// the copy of the finished items. A restored stage hands out the saved items first, then goes on
// pulling its restored input.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "sluice/graph/plan.h"
#include "sluice/graph/stage.h"

namespace sluice {

// A unit of work: consecutive items of the input, `first_index` being the position of the first.
struct AsyncTask {
  uint64_t sequence = 0;
  int64_t first_index = 0;
  size_t input_count = 0;  // Items taken from the input (the body may change items.size()).
  Chunk items;
  int64_t bytes = 0;  // What a stage with a RAM share counts for it (estimated until finished).
  // Released by each thread that hands the task on and acquired by the next: the flow graph's own
  // ordering is inside libtbb, where a race detector does not see it, and a reused chunk's
  // memory still carries the accesses of the threads that used it before.
  std::atomic<int> hand_offs{0};
  // Set once the stage stops (its iterator cancelled or destroyed), when nobody will see the
  // task's results: a body of many items stops between them, so that destroying an iterator
  // waits only for the calls already running, not for the rest of every task in flight.
  const std::atomic<bool>* stopping = nullptr;

  bool stopped() const { return stopping->load(std::memory_order_relaxed); }
};

struct AsyncStageConfig {
  int parallelism = 1;
  bool deterministic = true;
  size_t max_tasks = 2;
  size_t max_elements = SIZE_MAX;
  // Items per task: 0 to adapt it so a task holds about 1 ms of pulling its input and running the
  // body (1 for expensive elements, up to 1024 for cheap ones): few enough hand-offs between
  // threads that they cost nothing next to the work. Or a unit size (a batch): a task then holds
  // whole units, one or as many as make about 1 ms (up to 4096 items, and within the stage's RAM
  // share), and only the input's end leaves the last one short; the body handles each unit.
  size_t task_size = 0;
  // AUTOTUNE parallelism (the iterator's Autotuner, graph/autotune.h, moves it between 1 and
  // this while the stage runs; 0: `parallelism` is fixed). At most `tasks_per_thread` tasks per
  // thread of the current parallelism are outstanding, besides `max_tasks`.
  int max_parallelism = 0;
  size_t tasks_per_thread = 0;
  // Lets the element budget grow (prefetch AUTOTUNE), doubling up to `max_elements_limit` when the
  // consumer finds nothing ready although the buffer was full since the last growth, as long as
  // that many of the largest elements seen fit the stage's share of the RAM budget.
  bool autotune_elements = false;
  size_t max_elements_limit = SIZE_MAX;
  // The same growth for `max_tasks`, up to `max_tasks_limit`, in a stage of fixed-size units
  // (a prefetch(AUTOTUNE) folded into map_and_batch): a task is one or more output batches.
  bool autotune_tasks = false;
  size_t max_tasks_limit = SIZE_MAX;
  // Transforms task.items in place (may add, drop or replace items). Runs concurrently on
  // different tasks; must not throw (errors become items).
  std::function<void(AsyncTask&)> body;
  // The body's own state (a map's seeds), saved and restored with the stage's while no task runs.
  std::function<void(StateWriter&)> save;
  std::function<void(const StateReader&)> restore;
};

// The most a tuned buffer grows to (prefetch(AUTOTUNE)'s elements, or the batches one adds to a
// map_and_batch it folded into); the RAM budget's share bounds it first.
inline constexpr size_t kTunedBufferLimit = 1024;

// The name of every feeder thread (at most 15 characters, Linux's limit).
inline constexpr char kFeederThreadName[] = "sluice-feeder";

// The feeder threads started and not yet joined, in the whole process: 0 once every pipeline
// iterator is gone, which a leak check can rely on. (Counting threads by name cannot: a oneTBB
// worker launched from a feeder thread inherits its name and lives on.)
int live_feeder_threads();

// Makes the iterator of an async stage over `input`.
std::unique_ptr<StageIterator> make_async_stage(ExecContext& ctx, StageStats* stats,
                                                StageInput input, AsyncStageConfig config);

}  // namespace sluice
