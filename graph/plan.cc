#include "sluice/graph/plan.h"

#include "sluice/core/errors.h"
#include "sluice/core/random.h"
#include "sluice/core/strings.h"
#include "sluice/core/threads.h"
#include "sluice/graph/engine.h"
#include "sluice/graph/optimize.h"
#include "sluice/graph/trace.h"

namespace sluice {

PlanPtr PlanNode::with_batch_size(int64_t) const {
  throw Internal(str_cat("stage '", name(), "' does not batch"));
}

PlanPtr PlanNode::with_worker_files(int, int) const {
  throw Internal(str_cat("stage '", name(), "' reads no files of its own"));
}

ExecContext::ExecContext(Options options, Engine* engine)
    : options_(std::move(options)), engine_(engine), trace_(std::make_unique<TraceRecorder>()) {}

ExecContext::~ExecContext() = default;

bool ExecContext::cancelled() const { return engine_->cancelled(); }

StageStats* ExecContext::stats_for(const StagePath& path, const std::string& name, bool async) {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  auto& slot = stats_[path.key];
  if (!slot) {
    slot = std::make_unique<StageStats>();
    slot->name = name;
    slot->depth = path.depth;
    slot->async = async;
    slot->trace = trace_.get();
    stats_order_.push_back(slot.get());
  }
  return slot.get();
}

std::vector<StageStatsSnapshot> ExecContext::stats_snapshot() const {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  std::vector<StageStatsSnapshot> out;
  out.reserve(stats_order_.size());
  for (const StageStats* stats : stats_order_) out.push_back(stats->snapshot());
  return out;
}

StagePath child_path(const StagePath& parent, int index, const PlanNode& node) {
  return StagePath{str_cat(parent.key, "/", index, ":", node.name()), parent.depth + 1};
}

std::unique_ptr<StageIterator> ExecContext::lower(const PlanNode& node, const StagePath* parent,
                                                  int index) {
  const StagePath path =
      parent == nullptr ? StagePath{node.name(), 0} : child_path(*parent, index, node);
  return node.make_iterator(*this, path);
}

PlanPtr ExecContext::prepare(PlanPtr plan) const {
  return options_.static_optimizations.value_or(true) ? optimize(plan) : plan;
}

PlanPtr ExecContext::prepare_returned(PlanPtr plan, std::string_view function) const {
  if (!plan) throw InvalidArgument(str_cat(function, " returned no dataset"));
  return prepare(std::move(plan));
}

uint64_t ExecContext::seed_for(std::optional<uint64_t> stage_seed, const StagePath& path) const {
  if (stage_seed) return *stage_seed;
  if (options_.seed) return mix_seed(*options_.seed, std::hash<std::string>{}(path.key));
  return seed_or_random(std::nullopt);
}

}  // namespace sluice
