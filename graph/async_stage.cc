#include "sluice/graph/async_stage.h"

#include <oneapi/tbb/flow_graph.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/graph/autotune.h"
#include "sluice/graph/engine.h"
#include "sluice/graph/trace.h"

namespace sluice {
namespace {

namespace flow = oneapi::tbb::flow;
using TaskPtr = std::shared_ptr<AsyncTask>;
using Clock = std::chrono::steady_clock;

int64_t elapsed_ns(Clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - since).count();
}

constexpr int64_t kTargetTaskNs = 1'000'000;
// A feeder's wait for room shorter than this found room at once: traces leave it out.
constexpr int64_t kMinTracedWaitNs = 1'000;

std::atomic<int> g_live_feeders{0};

// The bytes of the tensors of `items` (their numbers; a string counts as its handle).
size_t tensor_bytes(const Chunk& items) {
  size_t bytes = 0;
  for (const Item& item : items) {
    for (const Tensor& t : item.element) bytes += t.byte_size();
  }
  return bytes;
}
constexpr size_t kMaxAdaptiveTaskSize = 1024;
// The most items a task of several units gathers, and the most a task reserves room for at once:
// beyond a few thousand, a task's items no longer stay in cache between the pull and the body.
constexpr size_t kMaxTaskItems = 4096;
// Emptied chunks a stage keeps for its next tasks.
constexpr size_t kSpareChunks = 2;

class AsyncStageIterator final : public StageIterator {
 public:
  AsyncStageIterator(ExecContext& ctx, StageStats* stats, StageInput input, AsyncStageConfig config)
      : StageIterator(stats),
        ctx_(ctx),
        stats_(stats),
        input_(std::move(input)),
        config_(std::move(config)) {
    if (config_.max_parallelism == 0) {
      stats_->parallelism.store(config_.parallelism, std::memory_order_relaxed);
    }
    report_buffer_limit();
    waker_ = ctx_.engine().add_waker([this] {
      stopping_ = true;
      wake_all();
    });
    if (config_.max_parallelism > 0 || tuned_limit() != nullptr) {
      tuner_ = &ctx_.engine().autotuner();
      tuner_id_ = tuner_->add({stats_, config_.max_parallelism, true, [this] { wake_all(); }});
    }
    // The graph attaches to the arena it is built in, so every task of it runs there.
    ctx_.engine().arena().execute([this] { build_graph(); });
  }

  ~AsyncStageIterator() override {
    if (tuner_ != nullptr) tuner_->remove(tuner_id_);
    stopping_ = true;
    wake_all();
    if (feeder_.joinable()) {
      feeder_.join();
      g_live_feeders.fetch_sub(1, std::memory_order_relaxed);
    }
    graph_->wait_for_all();
    ctx_.engine().remove_waker(waker_);
    if (held_bytes_ != 0) stats_->add_buffered_bytes(-held_bytes_);
  }

 protected:
  bool next_internal(Chunk& out, size_t max) override {
    if (!started_) start();
    while (true) {
      if (cursor_ < current_.size()) {
        const size_t n = std::min(max, current_.size() - cursor_);
        for (size_t i = 0; i < n; ++i) out.push_back(std::move(current_[cursor_ + i]));
        cursor_ += n;
        return true;
      }
      std::unique_lock<std::mutex> lock(mutex_);
      if (done_.empty() && !finished_locked() && !halted()) {
        // tf.data's prefetch autotuner: the consumer is starved although the buffer was full
        // since the last growth, so consumption is burstier than the buffer: double it. A
        // producer that is simply slower than the consumer never fills the buffer, and more
        // room would only hold more of its elements for nothing.
        size_t* limit = tuned_limit();
        if (limit != nullptr && buffer_was_full_ && *limit < tuned_limit_most() &&
            2 * *limit * inputs_per_tuned_unit() * bytes_per_input_ <=
                static_cast<size_t>(tuner_->byte_share())) {
          *limit = std::min(std::max<size_t>(*limit, 1) * 2, tuned_limit_most());
          report_buffer_limit();
          buffer_was_full_ = false;
          room_.notify_all();
        }
        const auto wait_start = Clock::now();
        ready_.wait(lock, [&] { return !done_.empty() || finished_locked() || halted(); });
        const int64_t waited = elapsed_ns(wait_start);
        stats_->consumer_wait_ns.fetch_add(waited, std::memory_order_relaxed);
        if (stats_->trace->recording()) trace(TraceSpan::kWaitItems, wait_start, waited, 0);
      }
      if (done_.empty()) return false;
      if (outstanding_elements_ >= config_.max_elements || outstanding_tasks_ >= task_limit()) {
        buffer_was_full_ = true;
      }
      TaskPtr task = std::move(done_.front());
      done_.pop_front();
      if (tuner_ != nullptr) {
        held_bytes_ -= task->bytes;
        stats_->add_buffered_bytes(-task->bytes);
        fit_buffer_to_share();
      }
      outstanding_tasks_ -= 1;
      outstanding_elements_ -= task->input_count;
      room_.notify_all();
      lock.unlock();
      Chunk spent = std::exchange(current_, std::move(task->items));
      cursor_ = 0;
      give_back(std::move(spent));
    }
  }

  void save_internal(StateWriter& writer) override {
    quiesce();
    struct Resume {
      AsyncStageIterator* self;
      ~Resume() { self->resume(); }
    } resume{this};
    // What the consumer would take next, in the order it would take it.
    std::vector<Item> buffered(current_.begin() + static_cast<std::ptrdiff_t>(cursor_),
                               current_.end());
    for (const TaskPtr& task : done_) {
      buffered.insert(buffered.end(), task->items.begin(), task->items.end());
    }
    writer.write_int("index", next_index_);
    writer.write_int("input_ended", input_ended_ ? 1 : 0);
    writer.write_items("buffered", buffered);
    // A tuned buffer keeps its size across a restore instead of growing again from the start.
    if (const size_t* limit = tuned_limit()) {
      writer.write_int("buffer_limit", static_cast<int64_t>(*limit));
    }
    if (config_.save) config_.save(writer);
    if (!input_ended_) input_.save(writer);
  }

  void restore_internal(const StateReader& reader) override {
    next_index_ = reader.read_int("index", 0, std::numeric_limits<int64_t>::max());
    input_ended_ = reader.read_bool("input_ended");
    current_.clear();
    cursor_ = 0;
    reader.read_items("buffered", current_);
    // A state saved without tuning, or before tuned sizes were saved, leaves the start size.
    size_t* limit = tuned_limit();
    if (limit != nullptr && reader.has("buffer_limit")) {
      const auto most = static_cast<int64_t>(
          std::min<size_t>(tuned_limit_most(), std::numeric_limits<int64_t>::max()));
      *limit = static_cast<size_t>(reader.read_int("buffer_limit", 1, most));
      report_buffer_limit();
    }
    if (config_.restore) config_.restore(reader);
    if (!input_ended_) input_.restore(reader);
  }

 private:
  bool halted() const { return stopping_ || ctx_.cancelled(); }

  // A span of this stage in the iterator's trace. REQUIRES: stats_->trace->recording() was true.
  void trace(TraceSpan kind, Clock::time_point start, int64_t ns, size_t items) const {
    const int64_t start_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count();
    stats_->trace->record(kind, *stats_, start_ns, start_ns + ns, static_cast<int64_t>(items));
  }

  // The consumer's, under the lock: a tuned buffer holding more than its share of the RAM budget
  // (shares shrink as stages start) gives up the excess.
  void fit_buffer_to_share() {
    size_t* limit = tuned_limit();
    if (limit == nullptr || bytes_per_input_ == 0) return;
    const size_t fit = std::max<size_t>(1, static_cast<size_t>(tuner_->byte_share()) /
                                               (bytes_per_input_ * inputs_per_tuned_unit()));
    if (*limit > fit) {
      *limit = fit;
      report_buffer_limit();
    }
  }

  // The tuned buffer limit (prefetch's elements, or the tasks of a stage a prefetch(AUTOTUNE)
  // folded into), or null; its most, and the inputs one unit of it holds.
  size_t* tuned_limit() {
    return config_.autotune_elements ? &config_.max_elements
           : config_.autotune_tasks  ? &config_.max_tasks
                                     : nullptr;
  }
  size_t tuned_limit_most() const {
    return config_.autotune_elements ? config_.max_elements_limit : config_.max_tasks_limit;
  }
  size_t inputs_per_tuned_unit() const {
    return config_.autotune_tasks ? std::max<size_t>(config_.task_size, 1) * task_units_ : 1;
  }

  int parallelism() const {
    return config_.max_parallelism > 0 ? stats_->parallelism.load(std::memory_order_relaxed)
                                       : config_.parallelism;
  }
  // Under the lock.
  size_t task_limit() const {
    return config_.tasks_per_thread * static_cast<size_t>(parallelism()) + config_.max_tasks;
  }
  // Under the lock: whether the RAM share has room for one more task. A stage holding nothing
  // may always run one (its output's size is unknown until one has run).
  bool bytes_room() const {
    if (tuner_ == nullptr || outstanding_tasks_ == 0) return true;
    if (bytes_per_input_ == 0) return false;
    const int64_t task =
        static_cast<int64_t>(std::max<size_t>(config_.task_size, 1) * bytes_per_input_);
    return held_bytes_ + task <= tuner_->byte_share();
  }

  void report_buffer_limit() {
    const size_t shown = config_.autotune_tasks ? config_.max_tasks : config_.max_elements;
    const size_t limit = shown == SIZE_MAX ? 0 : shown;
    stats_->buffer_limit.store(static_cast<int64_t>(limit), std::memory_order_relaxed);
  }

  // Starts the feeder, unless the input ended before a save this stage was restored from.
  void start() {
    started_ = true;
    if (input_ended_) return;
    feeder_ = std::thread([this] { feed(); });
    g_live_feeders.fetch_add(1, std::memory_order_relaxed);
  }

  // Stops the feeder pulling and waits for the tasks in flight: afterwards nothing but the
  // consumer touches the input or the finished tasks, until resume().
  void quiesce() {
    std::unique_lock<std::mutex> lock(mutex_);
    paused_ = true;
    room_.notify_all();
    ready_.wait(lock, [&] {
      return halted() ||
             ((feeder_waiting_ || input_ended_ || !started_) && delivered_ == submitted_);
    });
    if (halted()) throw Cancelled("the iterator was cancelled while saving its state");
  }

  void resume() {
    std::lock_guard<std::mutex> lock(mutex_);
    paused_ = false;
    room_.notify_all();
  }
  bool finished_locked() const { return input_ended_ && delivered_ == submitted_; }

  // The consumer's emptied chunk, kept for a later task: a chunk of a few thousand items is
  // large enough that the C library would give its memory back to the kernel when freed, and the
  // next task would fault every page of it in again.
  void give_back(Chunk spent) {
    spent.clear();
    std::lock_guard<std::mutex> lock(mutex_);
    if (spare_chunks_.size() < kSpareChunks) spare_chunks_.push_back(std::move(spent));
  }

  void wake_all() {
    std::lock_guard<std::mutex> lock(mutex_);
    ready_.notify_all();
    room_.notify_all();
  }

  void build_graph() {
    graph_ = std::make_unique<flow::graph>();
    const int concurrency =
        config_.max_parallelism > 0 ? config_.max_parallelism : config_.parallelism;
    work_ = std::make_unique<flow::function_node<TaskPtr, TaskPtr>>(
        *graph_, static_cast<size_t>(concurrency), [this](const TaskPtr& task) {
          task->hand_offs.load(std::memory_order_acquire);
          run(*task);
          task->hand_offs.fetch_add(1, std::memory_order_release);
          if (config_.max_parallelism > 0) {
            std::lock_guard<std::mutex> lock(mutex_);
            running_ -= 1;
            room_.notify_all();
          }
          return task;
        });
    deliver_ = std::make_unique<flow::function_node<TaskPtr>>(
        *graph_, flow::serial, [this](const TaskPtr& task) {
          task->hand_offs.load(std::memory_order_acquire);
          const int64_t bytes = tuner_ != nullptr ? tensor_bytes(task->items) : 0;
          std::lock_guard<std::mutex> lock(mutex_);
          if (tuner_ != nullptr) {
            if (task->input_count > 0) {
              const size_t per_input =
                  (static_cast<size_t>(bytes) + task->input_count - 1) / task->input_count;
              bytes_per_input_ = std::max(bytes_per_input_, per_input);
            }
            held_bytes_ += bytes - task->bytes;
            stats_->add_buffered_bytes(bytes - task->bytes);
            task->bytes = bytes;
          }
          done_.push_back(task);
          delivered_ += 1;
          ready_.notify_all();
        });
    if (config_.deterministic) {
      order_ = std::make_unique<flow::sequencer_node<TaskPtr>>(
          *graph_, [](const TaskPtr& task) { return task->sequence; });
      flow::make_edge(*work_, *order_);
      flow::make_edge(*order_, *deliver_);
    } else {
      flow::make_edge(*work_, *deliver_);
    }
  }

  // A worker's part: the body, unless the stage has stopped.
  void run(AsyncTask& task) {
    if (!halted()) time_body(task);
    // The body may have stopped part way, or not run: no stage downstream may take the items.
    if (halted()) task.items.clear();
  }

  // The body, timed.
  void time_body(AsyncTask& task) {
    const auto start = Clock::now();
    const size_t inputs = task.items.size();
    config_.body(task);
    const int64_t ns = elapsed_ns(start);
    stats_->busy_ns.fetch_add(ns, std::memory_order_relaxed);
    if (stats_->trace->recording()) trace(TraceSpan::kWork, start, ns, inputs);
    if (inputs > 0) {
      // Exponential moving average of the body's cost per input item.
      const int64_t per_item = std::max<int64_t>(1, ns / static_cast<int64_t>(inputs));
      const int64_t old = ns_per_item_.load(std::memory_order_relaxed);
      ns_per_item_.store(old == 0 ? per_item : (old * 3 + per_item) / 4, std::memory_order_relaxed);
    }
  }

  // An adaptive task's first item waits for the others to be pulled and run before anyone sees
  // it, so the size counts both costs: a prefetch, whose body is empty, of slow elements (batches
  // of images) hands each one on at once.
  // Units of a fixed size (batches) likewise: as many whole ones as make about 1 ms, so cheap
  // batches share one hand-off.
  size_t next_task_size() const {
    const int64_t body = ns_per_item_.load(std::memory_order_relaxed);
    const int64_t per_item = body + pull_ns_per_item_.load(std::memory_order_relaxed);
    if (config_.task_size > 0) {
      if (body == 0) return config_.task_size;
      const auto unit_ns = static_cast<int64_t>(config_.task_size) * per_item;
      const size_t units =
          std::clamp<size_t>(static_cast<size_t>(kTargetTaskNs / unit_ns), 1,
                             std::max<size_t>(1, kMaxTaskItems / config_.task_size));
      return units * config_.task_size;
    }
    if (body == 0) return 1;  // Until a body has run, its cost is unknown: it may be large.
    return std::clamp<size_t>(static_cast<size_t>(kTargetTaskNs / per_item), 1,
                              kMaxAdaptiveTaskSize);
  }

  // The feeder thread: pulls chunks from the input while there is room, and submits them.
  void feed() {
    // Named, as tf.data names its threads, so a debugger or a leak check can tell it apart.
    pthread_setname_np(pthread_self(), kFeederThreadName);
    TraceRecorder::name_this_thread(str_cat("feeder: ", stats_->name));
    uint64_t sequence = 0;
    while (true) {
      size_t want = next_task_size();
      Chunk items;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        const auto start = Clock::now();
        // While it waits here the feeder touches nothing a save reads.
        feeder_waiting_ = true;
        if (paused_) ready_.notify_all();
        room_.wait(lock, [&] {
          return halted() || (!paused_ && outstanding_tasks_ < task_limit() &&
                              outstanding_elements_ < config_.max_elements && bytes_room());
        });
        feeder_waiting_ = false;
        stats_->output_wait_ns.fetch_add(elapsed_ns(start), std::memory_order_relaxed);
        if (stats_->trace->recording() && elapsed_ns(start) >= kMinTracedWaitNs) {
          trace(TraceSpan::kWaitRoom, start, elapsed_ns(start), 0);
        }
        if (halted()) break;
        // Adaptive tasks count items, fixed-size ones whole units (batches): as many as the RAM
        // share has room for, once the size of an output is known, and at least one.
        const size_t unit = std::max<size_t>(config_.task_size, 1);
        if (config_.task_size == 0) {
          want = std::min(want, config_.max_elements - outstanding_elements_);
        }
        if (tuner_ != nullptr && bytes_per_input_ > 0) {
          const int64_t room = std::max<int64_t>(0, tuner_->byte_share() - held_bytes_);
          want = unit * std::clamp<size_t>(static_cast<size_t>(room) / (unit * bytes_per_input_), 1,
                                           want / unit);
        }
        task_units_ = want / unit;
        if (!spare_chunks_.empty()) {
          items = std::move(spare_chunks_.back());
          spare_chunks_.pop_back();
        }
      }
      auto task = std::make_shared<AsyncTask>();
      task->items = std::move(items);
      task->stopping = &stopping_;
      task->sequence = sequence;
      task->first_index = next_index_;
      // Room for the task at once (up to a bound, for huge batches of an input that may end
      // sooner): a chunk grown one doubling at a time moves each item twice on average.
      task->items.reserve(std::min(want, kMaxTaskItems));
      bool more = true;
      const auto pull_start = Clock::now();
      while (more && task->items.size() < want && !halted()) {
        more = input_.next(task->items, want - task->items.size());
      }
      if (halted()) break;
      const size_t size = task->items.size();
      if (size > 0) {
        const int64_t per_item = std::max<int64_t>(1, elapsed_ns(pull_start) / int64_t(size));
        const int64_t old = pull_ns_per_item_.load(std::memory_order_relaxed);
        pull_ns_per_item_.store(old == 0 ? per_item : (old * 3 + per_item) / 4,
                                std::memory_order_relaxed);
      }
      if (size > 0) {
        std::unique_lock<std::mutex> lock(mutex_);
        if (config_.max_parallelism > 0) {
          // The task waits, pulled, for a worker: ready the moment one finishes. A save in
          // progress takes it at once, as it would take a task in flight.
          room_.wait(lock, [&] {
            return halted() || paused_ || running_ < static_cast<size_t>(parallelism());
          });
          if (halted()) break;
          running_ += 1;
        }
        if (tuner_ != nullptr) {
          task->bytes = static_cast<int64_t>(size * bytes_per_input_);
          held_bytes_ += task->bytes;
          stats_->add_buffered_bytes(task->bytes);
        }
        outstanding_tasks_ += 1;
        outstanding_elements_ += size;
        task->input_count = size;
        submitted_ += 1;
        sequence += 1;
        next_index_ += static_cast<int64_t>(size);
        task->hand_offs.fetch_add(1, std::memory_order_release);
        work_->try_put(task);
      }
      if (!more) break;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    input_ended_ = true;
    ready_.notify_all();
  }

  ExecContext& ctx_;
  StageStats* stats_;
  StageInput input_;  // Used by the feeder thread only.
  AsyncStageConfig config_;
  uint64_t waker_ = 0;

  std::unique_ptr<flow::graph> graph_;
  std::unique_ptr<flow::function_node<TaskPtr, TaskPtr>> work_;
  std::unique_ptr<flow::sequencer_node<TaskPtr>> order_;
  std::unique_ptr<flow::function_node<TaskPtr>> deliver_;
  std::atomic<int64_t> ns_per_item_{0};       // The body's cost per input item (moving average).
  std::atomic<int64_t> pull_ns_per_item_{0};  // The input's, as the feeder pulls it.

  std::mutex mutex_;
  std::condition_variable ready_;  // Consumer: a task was delivered, or the stream ended.
  std::condition_variable room_;   // Feeder: the consumer took a task.
  std::deque<TaskPtr> done_;
  size_t outstanding_tasks_ = 0;
  size_t outstanding_elements_ = 0;
  uint64_t submitted_ = 0;
  uint64_t delivered_ = 0;
  bool input_ended_ = false;
  bool paused_ = false;           // A save is reading the stage: the feeder must not pull.
  bool feeder_waiting_ = false;   // The feeder waits for room (or for the pause to end).
  int64_t next_index_ = 0;        // Input items pulled: the index of the next one. Feeder's, or
                                  // the consumer's while paused.
  bool started_ = false;          // Consumer only.
  bool buffer_was_full_ = false;  // Since the autotuner last grew the tuned limit.
  // Stages with a tuned knob: the tuner, the bytes held (AsyncTask::bytes of the outstanding
  // tasks) and the most bytes an input item has made, and the tasks in the body.
  Autotuner* tuner_ = nullptr;
  uint64_t tuner_id_ = 0;
  int64_t held_bytes_ = 0;
  size_t bytes_per_input_ = 0;
  size_t task_units_ = 1;            // Units (task_size items, or 1) in the latest task.
  std::vector<Chunk> spare_chunks_;  // Emptied by the consumer, for the feeder (see give_back).
  size_t running_ = 0;
  // Set by the destructor, or by the iterator's cancellation. Read without the lock by the feeder
  // and the workers, and by the bodies (AsyncTask::stopping).
  std::atomic<bool> stopping_{false};

  Chunk current_;  // The task the consumer is reading from.
  size_t cursor_ = 0;

  std::thread feeder_;
};

}  // namespace

int live_feeder_threads() { return g_live_feeders.load(std::memory_order_relaxed); }

std::unique_ptr<StageIterator> make_async_stage(ExecContext& ctx, StageStats* stats,
                                                StageInput input, AsyncStageConfig config) {
  return std::make_unique<AsyncStageIterator>(ctx, stats, std::move(input), std::move(config));
}

}  // namespace sluice
