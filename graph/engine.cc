#include "sluice/graph/engine.h"

#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <mutex>
#include <string>

#include "sluice/core/errors.h"
#include "sluice/core/threads.h"

namespace sluice {
namespace {

// The arena's threads: those asked for, up to the workers of oneTBB's pool, which the process's
// ThreadBudget sizes (core/threads.h) and the engine never resizes. An arena asking for more
// would run on as many anyway, and oneTBB would print a warning about it on stderr. A pool
// without a worker is refused: the pipeline's tasks would never run and its consumer would wait
// forever.
int arena_threads(int threads) {
  const size_t limit = oneapi::tbb::global_control::active_value(
      oneapi::tbb::global_control::max_allowed_parallelism);
  if (limit < 2) {
    throw FailedPrecondition(
        "the oneTBB global_control max_allowed_parallelism limit of " + std::to_string(limit) +
        " leaves no worker thread for the input pipeline (the consumer thread never joins its "
        "work): hold a sluice::ThreadBudget (core/threads.h) of at least 1 thread, or allow at "
        "least 2");
  }
  return static_cast<int>(std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), limit - 1));
}

}  // namespace

Engine::Engine(int threads, const AutotuneOptions& autotune)
    : threads_(arena_threads(threads)), arena_(threads_, 0), autotuner_(autotune) {
  arena_.initialize();
}

Engine::~Engine() = default;

void Engine::cancel() {
  cancelled_.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> lock(wakers_mutex_);
  for (auto& [id, wake] : wakers_) wake();
}

uint64_t Engine::add_waker(std::function<void()> wake) {
  std::lock_guard<std::mutex> lock(wakers_mutex_);
  wakers_.emplace(next_waker_, std::move(wake));
  return next_waker_++;
}

void Engine::remove_waker(uint64_t id) {
  std::lock_guard<std::mutex> lock(wakers_mutex_);
  wakers_.erase(id);
}

}  // namespace sluice
