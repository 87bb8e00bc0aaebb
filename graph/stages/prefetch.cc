#include "sluice/graph/stages/prefetch.h"

#include "sluice/core/strings.h"
#include "sluice/graph/async_stage.h"

namespace sluice {

namespace {
constexpr size_t kAutotuneInitial = 16;
}  // namespace

// The stage is an AsyncStage (graph/async_stage.h) whose body does nothing: its saved state is
// what that saves, the buffered elements in the order the consumer would take them and the
// input's state, plus, under AUTOTUNE, the buffer size tuned so far, which a restored iterator
// starts from instead of growing again from kAutotuneInitial.
std::unique_ptr<StageIterator> PrefetchNode::make_iterator(ExecContext& ctx,
                                                           const StagePath& path) const {
  if (buffer_size_ == 0) return ctx.lower(*input(), &path, 0);
  StageStats* stats = ctx.stats_for(path, name(), true);
  AsyncStageConfig config;
  config.parallelism = 1;
  config.deterministic = true;
  config.max_tasks = SIZE_MAX;
  if (buffer_size_ == kAutotune) {
    // Growth stops where the buffer could hold more than its share of the RAM budget (batches of
    // images are megabytes each), and the buffer shrinks to its share when that shrinks.
    const bool autotune = *ctx.options().autotune.enabled;
    config.max_elements = autotune ? kAutotuneInitial : 1;
    config.autotune_elements = autotune;
    config.max_elements_limit = kTunedBufferLimit;
  } else {
    config.max_elements = static_cast<size_t>(buffer_size_);
  }
  config.body = [](AsyncTask&) {};  // The work is the feeder's pulling ahead.
  return make_async_stage(ctx, stats, lower_input(ctx, *this, path, stats), std::move(config));
}

PlanPtr make_prefetch(PlanPtr input, int64_t buffer_size) {
  if (buffer_size < kAutotune) {
    throw InvalidArgument(
        str_cat("prefetch: buffer_size must be >= 0 or AUTOTUNE (-1), got ", buffer_size));
  }
  return std::make_shared<PrefetchNode>(std::move(input), buffer_size);
}

}  // namespace sluice
