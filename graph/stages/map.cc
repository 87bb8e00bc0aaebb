#include "sluice/graph/stages/map.h"

#include <algorithm>
#include <limits>
#include <span>

#include "sluice/core/strings.h"
#include "sluice/graph/async_stage.h"
#include "sluice/graph/batching.h"
#include "sluice/graph/selecting_stage.h"

namespace sluice {
namespace {

// A step bound to one pass: its function and the seed of this pass.
struct BoundStep {
  const MapFunction* function;
  uint64_t seed;
  uint64_t pass;
  std::atomic<uint64_t>* passes;  // The step's pass counter.
};

}  // namespace

std::vector<std::atomic<uint64_t>*> step_pass_counters(const std::vector<MapStep>& steps) {
  std::vector<std::atomic<uint64_t>*> counters;
  for (const MapStep& step : steps) counters.push_back(step.passes.get());
  return counters;
}

namespace {

std::vector<BoundStep> bind_steps(const std::vector<MapStep>& steps, ExecContext& ctx,
                                  const StagePath& path) {
  std::vector<BoundStep> bound;
  for (size_t i = 0; i < steps.size(); ++i) {
    const uint64_t base = ctx.seed_for(steps[i].seed, StagePath{str_cat(path.key, "#", i), 0});
    const uint64_t pass = steps[i].passes->fetch_add(1, std::memory_order_relaxed);
    bound.push_back({&steps[i].function, mix_seed(base, pass), pass, steps[i].passes.get()});
  }
  return bound;
}

// The seeds are saved as drawn, so an unseeded map (a fresh seed per iterator) resumes exactly.
void save_steps(const std::vector<BoundStep>& steps, StateWriter& writer) {
  for (size_t i = 0; i < steps.size(); ++i) {
    writer.write_int(str_cat("seed", i), static_cast<int64_t>(steps[i].seed));
    writer.write_int(str_cat("pass", i), static_cast<int64_t>(steps[i].pass));
  }
}

// Takes the saved seeds, and sets each step's pass counter where it stood after the saved pass,
// so that the passes after this one (epochs under repeat) draw what they would have drawn.
void restore_steps(std::vector<BoundStep>& steps, const StateReader& reader) {
  for (size_t i = 0; i < steps.size(); ++i) {
    steps[i].seed = static_cast<uint64_t>(reader.read_int(str_cat("seed", i)));
    steps[i].pass = static_cast<uint64_t>(
        reader.read_int(str_cat("pass", i), 0, std::numeric_limits<int64_t>::max() - 1));
    restore_pass_counter(*steps[i].passes, steps[i].pass);
  }
}

// Not the seeds: the state holds the seeds drawn, which a restore takes whatever seed the map
// was given (a flow_from_directory without a seed gives its map a fresh one in each process).
std::string steps_parameters(const std::vector<MapStep>& steps) {
  return str_cat("functions=", steps.size());
}

// Runs the steps on one item in place; an exception becomes the item's error, naming the element
// and where it was read. A step's output without an origin inherits its input's.
void apply_steps(const std::vector<BoundStep>& steps, Item& item, int64_t index,
                 const std::string& stage) {
  if (!item.ok()) return;
  // The function takes the element by value: keep its origin for the error message and for a
  // result without one (elements made in memory have none and pay two tests).
  ElementOrigin origin;
  try {
    for (const BoundStep& step : steps) {
      if (item.element.origin()) origin = item.element.origin();
      item.element = (*step.function)(std::move(item.element), ElementContext{index, step.seed});
      if (origin && !item.element.origin()) item.element.set_origin(origin);
    }
  } catch (const OutOfRange& e) {
    // Ending the stream from inside a function would silently drop data: tf.data makes it an
    // error, and so do we.
    item = Item::failure(std::make_exception_ptr(
        InvalidArgument(str_cat("Function invocation produced OutOfRangeError: ", e.what(),
                                element_error_context(stage, index, origin)))));
  } catch (...) {
    item = Item::failure(
        add_error_context(std::current_exception(), element_error_context(stage, index, origin)));
  }
}

// AUTOTUNE: the autotuner moves the parallelism between 1 and the CPU budget (the thread budget
// when autotuning is off), starting at the budget; a stage that waits for a tuned worker has 2
// tasks outstanding per worker, as a fixed one.
void set_parallelism(AsyncStageConfig& config, int64_t requested, size_t extra_tasks,
                     const ExecContext& ctx) {
  const AutotuneOptions& autotune = ctx.options().autotune;
  if (requested == kAutotune && *autotune.enabled) {
    config.parallelism = 1;
    config.max_parallelism = *autotune.cpu_budget;
    config.tasks_per_thread = 2;
    config.max_tasks = extra_tasks;
    return;
  }
  config.parallelism =
      requested == kAutotune ? *ctx.options().threads : static_cast<int>(requested);
  config.max_tasks = 2 * static_cast<size_t>(config.parallelism) + extra_tasks;
}

class SequentialMapIterator final : public StageIterator {
 public:
  SequentialMapIterator(StageStats* stats, StageInput input, std::vector<BoundStep> steps,
                        std::string name)
      : StageIterator(stats),
        input_(std::move(input)),
        steps_(std::move(steps)),
        name_(std::move(name)) {}

 protected:
  bool next_internal(Chunk& out, size_t max) override {
    const size_t before = out.size();
    if (!input_.next(out, max)) return false;
    for (size_t i = before; i < out.size(); ++i) apply_steps(steps_, out[i], index_++, name_);
    return true;
  }
  void save_internal(StateWriter& writer) override {
    writer.write_int("index", index_);
    save_steps(steps_, writer);
    input_.save(writer);
  }
  void restore_internal(const StateReader& reader) override {
    index_ = reader.read_int("index", 0, std::numeric_limits<int64_t>::max());
    restore_steps(steps_, reader);
    input_.restore(reader);
  }

 private:
  StageInput input_;
  std::vector<BoundStep> steps_;
  std::string name_;
  int64_t index_ = 0;
};

class FilterNode final : public PlanNodeOf<FilterNode> {
 public:
  FilterNode(PlanPtr input, Predicate predicate)
      : PlanNodeOf("filter", {std::move(input)}), predicate_(std::move(predicate)) {}

  bool keeps_batches() const override { return true; }
  int64_t cardinality() const override {
    const int64_t n = input()->cardinality();
    return n == kInfiniteCardinality ? kInfiniteCardinality : kUnknownCardinality;
  }
  std::string parameters() const override { return ""; }

  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override {
    class It final : public SelectingIterator {
     public:
      It(StageStats* stats, StageInput input, const Predicate& predicate)
          : SelectingIterator(stats, std::move(input)), predicate_(predicate) {}

     protected:
      bool keep(Item& item) override {
        const int64_t index = index_++;
        if (!item.ok()) return true;
        try {
          return predicate_(item.element, ElementContext{index, 0});
        } catch (...) {
          item = Item::failure(
              add_error_context(std::current_exception(),
                                element_error_context("filter", index, item.element.origin())));
          return true;
        }
      }
      void save_position(StateWriter& writer) override { writer.write_int("index", index_); }
      void restore_position(const StateReader& reader) override {
        index_ = reader.read_int("index", 0, std::numeric_limits<int64_t>::max());
      }

     private:
      const Predicate& predicate_;
      int64_t index_ = 0;
    };
    StageStats* stats = ctx.stats_for(path, name(), false);
    return std::make_unique<It>(stats, lower_input(ctx, *this, path, stats), predicate_);
  }

 private:
  Predicate predicate_;
};

}  // namespace

MapNode::MapNode(PlanPtr input, std::vector<MapStep> steps, MapSettings settings)
    : PlanNodeOf(steps.size() > 1 ? str_cat("map x", steps.size()) : "map", {std::move(input)}),
      steps_(std::move(steps)),
      settings_(settings) {}

std::unique_ptr<StageIterator> MapNode::make_iterator(ExecContext& ctx,
                                                      const StagePath& path) const {
  StageStats* stats = ctx.stats_for(path, name(), is_async());
  StageInput input = lower_input(ctx, *this, path, stats);
  std::vector<BoundStep> steps = bind_steps(steps_, ctx, path);
  if (!is_async()) {
    return std::make_unique<SequentialMapIterator>(stats, std::move(input), std::move(steps),
                                                   name());
  }
  AsyncStageConfig config;
  set_parallelism(config, settings_.num_parallel_calls, 0, ctx);
  config.deterministic = settings_.deterministic.value_or(*ctx.options().deterministic);
  auto shared = std::make_shared<std::vector<BoundStep>>(std::move(steps));
  config.body = [steps = shared, name = name()](AsyncTask& task) {
    for (size_t i = 0; i < task.items.size() && !task.stopped(); ++i) {
      apply_steps(*steps, task.items[i], task.first_index + static_cast<int64_t>(i), name);
    }
  };
  config.save = [steps = shared](StateWriter& writer) { save_steps(*steps, writer); };
  config.restore = [steps = shared](const StateReader& reader) { restore_steps(*steps, reader); };
  return make_async_stage(ctx, stats, std::move(input), std::move(config));
}

MapAndBatchNode::MapAndBatchNode(PlanPtr input, std::vector<MapStep> steps, int64_t batch_size,
                                 bool drop_remainder, MapSettings settings)
    : PlanNodeOf("map_and_batch", {std::move(input)}),
      steps_(std::move(steps)),
      batch_size_(batch_size),
      drop_remainder_(drop_remainder),
      settings_(settings) {}

std::string MapNode::parameters() const {
  return str_cat(steps_parameters(steps_), ", parallel=", is_async() ? "true" : "false");
}

std::string MapAndBatchNode::parameters() const {
  return str_cat(steps_parameters(steps_), ", batch_size=", batch_size_,
                 ", drop_remainder=", drop_remainder_ ? "true" : "false");
}

PlanPtr MapAndBatchNode::with_batch_size(int64_t batch_size) const {
  if (batch_size <= 0)
    throw InvalidArgument(str_cat("map_and_batch: batch_size must be > 0, got ", batch_size));
  auto copy = std::make_shared<MapAndBatchNode>(*this);
  copy->batch_size_ = batch_size;
  return copy;
}

int64_t MapAndBatchNode::cardinality() const {
  const int64_t n = input()->cardinality();
  if (n < 0) return n;
  return drop_remainder_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

std::unique_ptr<StageIterator> MapAndBatchNode::make_iterator(ExecContext& ctx,
                                                              const StagePath& path) const {
  StageStats* stats = ctx.stats_for(path, name(), true);
  StageInput input = lower_input(ctx, *this, path, stats);
  AsyncStageConfig config;
  set_parallelism(config, settings_.num_parallel_calls == 0 ? 1 : settings_.num_parallel_calls,
                  settings_.extra_buffer, ctx);
  config.deterministic = settings_.deterministic.value_or(*ctx.options().deterministic);
  config.task_size = static_cast<size_t>(batch_size_);
  if (settings_.tuned_buffer) {
    // As prefetch(AUTOTUNE): untuned, one element more; tuned, from two batches on, doubling.
    const bool autotune = *ctx.options().autotune.enabled;
    config.autotune_tasks = autotune;
    config.max_tasks += autotune ? 2 : 1;
    config.max_tasks_limit = config.max_tasks + kTunedBufferLimit;
  }
  auto shared = std::make_shared<std::vector<BoundStep>>(bind_steps(steps_, ctx, path));
  config.save = [steps = shared](StateWriter& writer) { save_steps(*steps, writer); };
  config.restore = [steps = shared](const StateReader& reader) { restore_steps(*steps, reader); };
  // A task holds one or more whole batches, the last maybe partial at the input's end. Batch k
  // replaces item k, whose batch is already made, so the task keeps its chunk's memory.
  config.body = [steps = shared, name = name(), batch = static_cast<size_t>(batch_size_),
                 drop = drop_remainder_](AsyncTask& task) {
    size_t batches = 0;
    for (size_t begin = 0; begin < task.items.size(); begin += batch) {
      const size_t end = std::min(begin + batch, task.items.size());
      if (drop && end - begin < batch) break;  // The partial last batch.
      const int64_t first = task.first_index + static_cast<int64_t>(begin);
      for (size_t i = begin; i < end; ++i) {
        if (task.stopped()) return;  // Nobody will see the task.
        apply_steps(*steps, task.items[i], first + static_cast<int64_t>(i - begin), name);
      }
      Item batched = batch_items(std::span<Item>(task.items).subspan(begin, end - begin), first);
      task.items[batches++] = std::move(batched);
    }
    task.items.resize(batches);
  };
  return make_async_stage(ctx, stats, std::move(input), std::move(config));
}

PlanPtr MapAndBatchNode::absorb_buffer(int64_t buffer_size) const {
  MapSettings settings = settings_;
  if (buffer_size == kAutotune) {
    if (settings.tuned_buffer) return nullptr;
    settings.tuned_buffer = true;
  } else {
    settings.extra_buffer += static_cast<size_t>(buffer_size);
  }
  return std::make_shared<MapAndBatchNode>(input(), steps_, batch_size_, drop_remainder_, settings);
}

PlanPtr MapNode::absorb_map(const std::vector<MapStep>& steps, const MapSettings& settings) const {
  const bool alike = settings_.num_parallel_calls == settings.num_parallel_calls &&
                     settings_.deterministic == settings.deterministic &&
                     settings_.extra_buffer == 0 && settings.extra_buffer == 0 &&
                     !settings_.tuned_buffer && !settings.tuned_buffer;
  if (!alike) return nullptr;
  std::vector<MapStep> both = steps_;
  both.insert(both.end(), steps.begin(), steps.end());
  return std::make_shared<MapNode>(input(), std::move(both), settings);
}

PlanPtr MapNode::absorb_batch(int64_t batch_size, bool drop_remainder) const {
  if (!is_async()) return nullptr;
  return std::make_shared<MapAndBatchNode>(input(), steps_, batch_size, drop_remainder, settings_);
}

PlanPtr make_map(PlanPtr input, MapFunction function, std::optional<uint64_t> seed,
                 MapSettings settings) {
  if (!function) throw InvalidArgument("map: no function given");
  if (settings.num_parallel_calls < kAutotune) {
    throw InvalidArgument(str_cat("map: num_parallel_calls must be positive or AUTOTUNE, got ",
                                  settings.num_parallel_calls));
  }
  return std::make_shared<MapNode>(
      std::move(input), std::vector<MapStep>{MapStep{std::move(function), seed}}, settings);
}

PlanPtr make_filter(PlanPtr input, Predicate predicate) {
  if (!predicate) throw InvalidArgument("filter: no predicate given");
  return std::make_shared<FilterNode>(std::move(input), std::move(predicate));
}

PlanPtr make_map_and_batch(PlanPtr input, MapFunction function, std::optional<uint64_t> seed,
                           int64_t batch_size, bool drop_remainder, MapSettings settings) {
  if (!function) throw InvalidArgument("map_and_batch: no function given");
  if (batch_size <= 0) {
    throw InvalidArgument(
        str_cat("map_and_batch: batch_size must be greater than zero, got ", batch_size));
  }
  return std::make_shared<MapAndBatchNode>(std::move(input),
                                           std::vector<MapStep>{MapStep{std::move(function), seed}},
                                           batch_size, drop_remainder, settings);
}

}  // namespace sluice
