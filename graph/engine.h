// Engine: the oneTBB resources of one iterator — the task arena sized by its thread budget, in
// which every flow graph of its parallel stages runs — and its cancellation. Internal to graph/.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace sluice {

class Engine {
 public:
  explicit Engine(int threads);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int threads() const { return threads_; }
  oneapi::tbb::task_arena& arena() { return arena_; }

  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  // Marks the iterator cancelled and wakes every stage blocked waiting on another.
  void cancel();

  // Wakers are how blocked stages learn of cancellation: cancel() calls each once.
  uint64_t add_waker(std::function<void()> wake);
  void remove_waker(uint64_t id);

 private:
  int threads_;
  oneapi::tbb::task_arena arena_;
  std::atomic<bool> cancelled_{false};
  std::mutex wakers_mutex_;
  std::map<uint64_t, std::function<void()>> wakers_;
  uint64_t next_waker_ = 0;
};

}  // namespace sluice
