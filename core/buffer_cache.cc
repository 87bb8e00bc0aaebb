#include "sluice/core/buffer_cache.h"

#include <list>
#include <mutex>
#include <new>

#include "sluice/core/memory_block.h"

namespace sluice {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kDefaultLimit = 0;
#else
constexpr size_t kDefaultLimit = size_t{256} << 20;
#endif

class BlockCache {
 public:
  void* take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    // Newest first: the block freed last is the likeliest still in cache. A pipeline keeps few
    // large blocks in flight, so the list stays short.
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
      if (it->bytes == bytes) {
        void* block = it->block;
        held_ -= bytes;
        blocks_.erase(it);
        return block;
      }
    }
    return nullptr;
  }

  void give(void* block, size_t bytes) {
    std::list<Block> evicted;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (bytes > limit_ || !keep(block, bytes)) {
        internal::free_block(block, bytes);
        return;
      }
      trim(evicted);
    }
    for (const Block& b : evicted) internal::free_block(b.block, b.bytes);  // Outside the lock.
  }

  void set_limit(size_t bytes) {
    std::list<Block> evicted;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      limit_ = bytes;
      trim(evicted);
    }
    for (const Block& b : evicted) internal::free_block(b.block, b.bytes);
  }

  size_t held() {
    std::lock_guard<std::mutex> lock(mutex_);
    return held_;
  }

  size_t limit() {
    std::lock_guard<std::mutex> lock(mutex_);
    return limit_;
  }

 private:
  struct Block {
    void* block;
    size_t bytes;
  };

  // Adds `block` as the most recently freed; false when even the list node cannot be allocated
  // (a tensor's destructor calls this, so it must not throw).
  bool keep(void* block, size_t bytes) noexcept {
    try {
      blocks_.push_front({block, bytes});
    } catch (const std::bad_alloc&) {
      return false;
    }
    held_ += bytes;
    return true;
  }

  // Moves the least recently freed blocks to `evicted` until the rest fit under the limit.
  void trim(std::list<Block>& evicted) {
    while (held_ > limit_) {
      held_ -= blocks_.back().bytes;
      evicted.splice(evicted.end(), blocks_, std::prev(blocks_.end()));
    }
  }

  std::mutex mutex_;
  std::list<Block> blocks_;  // Most recently freed first.
  size_t held_ = 0;
  size_t limit_ = kDefaultLimit;
};

// Never destroyed: tensors in static storage may be freed after it would have been.
BlockCache& cache() {
  static auto* instance = new BlockCache;
  return *instance;
}

}  // namespace

void set_tensor_buffer_cache_limit(size_t bytes) { cache().set_limit(bytes); }

size_t tensor_buffer_cache_limit() { return cache().limit(); }

size_t tensor_buffer_cache_bytes() { return cache().held(); }

namespace internal {

void* take_cached_block(size_t bytes) { return cache().take(bytes); }

void give_cached_block(void* block, size_t bytes) { cache().give(block, bytes); }

}  // namespace internal
}  // namespace sluice
