#include "sluice/core/threads.h"

#include <oneapi/tbb/global_control.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"

namespace sluice {
namespace {

std::atomic<const ThreadBudget*> innermost{nullptr};

}  // namespace

int default_thread_count() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware > 0 ? static_cast<int>(hardware) : 1;
}

struct ThreadBudget::Control {
  // oneTBB counts the calling thread in max_allowed_parallelism: N workers need N + 1.
  explicit Control(int workers)
      : control(oneapi::tbb::global_control::max_allowed_parallelism,
                static_cast<size_t>(workers) + 1) {}
  oneapi::tbb::global_control control;
};

ThreadBudget::ThreadBudget(int threads, Caller caller)
    : threads_(threads == 0 ? default_thread_count() : threads), outer_(innermost.load()) {
  if (threads < 0) throw InvalidArgument(str_cat("thread budget must be >= 0, got ", threads));
  if (outer_ != nullptr) threads_ = std::min(threads_, outer_->threads());
  control_ =
      std::make_unique<Control>(caller == Caller::kComputes ? std::max(threads_ - 1, 1) : threads_);
  innermost.store(this);
}

ThreadBudget::~ThreadBudget() { innermost.store(outer_); }

int ThreadBudget::current() {
  const ThreadBudget* budget = innermost.load();
  return budget != nullptr ? budget->threads() : default_thread_count();
}

}  // namespace sluice
