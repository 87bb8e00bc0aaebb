#include "graph/engine.h"

#include <oneapi/tbb/global_control.h>

#include <memory>
#include <mutex>
#include <string>

#include "core/errors.h"
#include "core/threads.h"

namespace sluice {
namespace {

// oneTBB keeps (max_allowed_parallelism - 1) worker threads for the whole process, by default one
// fewer than the cores, since it expects the calling thread to join the work. A pipeline's
// consumer never joins (it waits for results), so the pool must be raised for an arena of N
// threads to get N workers. The most restrictive active global_control wins, so a limit the
// application sets itself is still respected.
void ensure_worker_threads(int threads) {
  static std::mutex mutex;
  static std::unique_ptr<oneapi::tbb::global_control> control;
  static int current = 0;
  const int wanted = std::max(threads, default_thread_count()) + 1;
  std::lock_guard<std::mutex> lock(mutex);
  if (wanted <= current) return;
  auto raised = std::make_unique<oneapi::tbb::global_control>(
      oneapi::tbb::global_control::max_allowed_parallelism, static_cast<size_t>(wanted));
  control = std::move(raised);
  current = wanted;
}

}  // namespace

Engine::Engine(int threads) : threads_(std::max(threads, 1)), arena_(threads_, 0) {
  ensure_worker_threads(threads_);
  // A limit of 1 leaves oneTBB no worker thread at all: the pipeline's tasks would never run and
  // its consumer would wait forever. Say so instead.
  const size_t limit = oneapi::tbb::global_control::active_value(
      oneapi::tbb::global_control::max_allowed_parallelism);
  if (limit < 2) {
    throw FailedPrecondition(
        "the oneTBB global_control max_allowed_parallelism limit of " + std::to_string(limit) +
        " leaves no worker thread for the input pipeline (the consumer thread never joins its "
        "work): allow at least 2, i.e. the pipeline's threads + 1");
  }
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
