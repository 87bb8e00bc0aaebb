#include "graph/executor.h"

#include "core/threads.h"
#include "graph/engine.h"
#include "graph/optimize.h"

namespace sluice {
namespace {

// The consumer pulls this many items at a time from the last stage.
constexpr size_t kConsumerChunk = 64;

Options resolve(Options options) {
  if (!options.threads || *options.threads <= 0) options.threads = default_thread_count();
  if (!options.deterministic) options.deterministic = true;
  if (!options.autotune) options.autotune = true;
  if (!options.static_optimizations) options.static_optimizations = true;
  return options;
}

}  // namespace

Execution::Execution(PlanPtr plan, const Options& options) {
  const Options resolved = resolve(options.merged_with(collect_options(plan)));
  plan_ = *resolved.static_optimizations ? optimize(plan) : std::move(plan);
  engine_ = std::make_unique<Engine>(*resolved.threads);
  ctx_ = std::make_unique<ExecContext>(resolved, engine_.get());
  root_ = ctx_->lower(*plan_, nullptr, 0);
}

Execution::~Execution() {
  engine_->cancel();
  root_.reset();
}

bool Execution::next(Item& item) {
  while (cursor_ == buffer_.size()) {
    if (ended_) return false;
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

const Options& Execution::options() const { return ctx_->options(); }

std::vector<StageStatsSnapshot> Execution::stats() const { return ctx_->stats_snapshot(); }

}  // namespace sluice
