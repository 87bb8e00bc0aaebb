#include "sluice/graph/executor.h"

#include <algorithm>
#include <cstring>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/core/threads.h"
#include "sluice/graph/engine.h"
#include "sluice/graph/optimize.h"

namespace sluice {
namespace {

// The consumer pulls this many items at a time from the last stage.
constexpr size_t kConsumerChunk = 64;

Options resolve(Options options) {
  if (!options.threads || *options.threads <= 0) options.threads = ThreadBudget::current();
  if (!options.deterministic) options.deterministic = true;
  AutotuneOptions& autotune = options.autotune;
  if (!autotune.enabled) autotune.enabled = true;
  if (autotune.ram_budget && *autotune.ram_budget <= 0) {
    throw InvalidArgument(str_cat("Options::autotune.ram_budget must be positive (bytes), got ",
                                  *autotune.ram_budget));
  }
  if (autotune.cpu_budget && *autotune.cpu_budget <= 0) {
    throw InvalidArgument(str_cat("Options::autotune.cpu_budget must be positive (threads), got ",
                                  *autotune.cpu_budget));
  }
  if (!autotune.ram_budget) autotune.ram_budget = default_ram_budget();
  if (!autotune.cpu_budget) autotune.cpu_budget = *options.threads;
  if (!options.static_optimizations) options.static_optimizations = true;
  return options;
}

// Every pass counter of the plan, in pre-order: the same sequence for any plan of the signature.
void collect_pass_counters(const PlanNode& node, std::vector<std::atomic<uint64_t>*>& out) {
  for (std::atomic<uint64_t>* counter : node.pass_counters()) out.push_back(counter);
  for (const PlanPtr& input : node.inputs()) collect_pass_counters(*input, out);
}

}  // namespace

Execution::Execution(PlanPtr plan, const Options& options) {
  const Options resolved = resolve(options.merged_with(collect_options(plan)));
  engine_ = std::make_unique<Engine>(*resolved.threads, resolved.autotune);
  ctx_ = std::make_unique<ExecContext>(resolved, engine_.get());
  plan_ = ctx_->prepare(std::move(plan));
  root_ = ctx_->lower(*plan_, nullptr, 0);
}

Execution::~Execution() {
  engine_->cancel();
  root_.reset();
}

bool Execution::next(Item& item) {
  pulled_ = true;
  while (cursor_ == buffer_.size()) {
    if (ended_) return false;
    engine_->autotuner().maybe_tune();
    buffer_.clear();
    cursor_ = 0;
    if (!root_->next(buffer_, kConsumerChunk)) {
      ended_ = true;
      return false;
    }
  }
  item = std::move(buffer_[cursor_++]);
  return true;
}

const PlanSignature& Execution::signature() {
  if (!signature_) signature_ = plan_signature(*plan_);
  return *signature_;
}

// The root's values sit under the root's name; the items the consumer pulled from the root and
// has not taken yet under "iterator".
Execution::SavedState Execution::save() {
  SavedState state{signature(), {}};
  StateWriter writer(state.values, "iterator");
  writer.write_int("ended", ended_ ? 1 : 0);
  writer.write_items("pending", std::span<const Item>(buffer_).subspan(cursor_));
  std::vector<std::atomic<uint64_t>*> counters;
  collect_pass_counters(*plan_, counters);
  std::string passes;
  for (const std::atomic<uint64_t>* counter : counters) {
    put_bytes<uint64_t>(passes, counter->load(std::memory_order_relaxed));
  }
  writer.write_bytes("passes", std::move(passes));
  if (!ended_) {
    StateWriter root(state.values, root_->stats().name);
    root_->save(root);
  }
  return state;
}

void Execution::restore(const PlanSignature& plan, const SavedValues& values) {
  if (pulled_ || restored_) {
    throw FailedPrecondition(str_cat(
        "Iterator::restore: the iterator has ", pulled_ ? "produced elements" : "been restored",
        " already; restore a state into a fresh iterator of the same dataset"));
  }
  check_signature(plan, signature());
  restored_ = true;
  const StateReader reader(values, "iterator");
  ended_ = reader.read_bool("ended");
  buffer_.clear();
  cursor_ = 0;
  reader.read_items("pending", buffer_);
  RestoredPasses restored;
  if (!ended_) root_->restore(StateReader(values, root_->stats().name));
  // The stages' restores set the counters of the passes they restored; every other counter takes
  // its saved value, undoing the passes re-made while restoring (an interleave whose input had
  // ended re-makes it without restoring it). The values were read before the pipeline paused to
  // save, so one may lag a pass a running stage drew since: the restored pass is the later one.
  if (reader.has("passes")) {
    std::vector<std::atomic<uint64_t>*> counters;
    collect_pass_counters(*plan_, counters);
    const std::string_view passes = reader.read_bytes("passes");
    if (passes.size() != counters.size() * sizeof(uint64_t)) {
      reader.fail("passes", str_cat("holds ", passes.size(), " bytes for ", counters.size(),
                                    " pass counters"));
    }
    for (size_t i = 0; i < counters.size(); ++i) {
      uint64_t saved = 0;
      std::memcpy(&saved, passes.data() + i * sizeof(uint64_t), sizeof(saved));
      counters[i]->store(std::max(saved, restored.value_set(counters[i])),
                         std::memory_order_relaxed);
    }
  }
}

const Options& Execution::options() const { return ctx_->options(); }

std::vector<StageStatsSnapshot> Execution::stats() const { return ctx_->stats_snapshot(); }

TraceRecorder& Execution::trace() const { return ctx_->trace(); }

}  // namespace sluice
