// Reuse of the memory of large tensor buffers. A pipeline allocates the same large sizes over and
// over (an image, a batch of them), and the C library gives blocks that large back to the kernel
// when they are freed, so each new one is faulted in again a page at a time: a third of the time
// of a tf.data-style image pipeline went there. Freed blocks of at least kCachedBlockMinBytes are
// kept instead, up to a byte limit, and handed out again for the same size; when a block does not
// fit under the limit, the least recently freed ones go back to the C library.
//
// Thread safety: all functions may be called from any thread.
#pragma once

#include <cstddef>

namespace sluice {

// The most bytes the cache keeps: 256 MiB by default (0 in AddressSanitizer builds, whose
// use-after-free checks need freed memory to be freed). 0 turns it off; lowering the limit gives
// back what is over it at once.
void set_tensor_buffer_cache_limit(size_t bytes);
size_t tensor_buffer_cache_limit();
// Bytes the cache holds now.
size_t tensor_buffer_cache_bytes();

namespace internal {

inline constexpr size_t kCachedBlockMinBytes = size_t{256} << 10;

// A kept block of exactly `bytes`, or null. REQUIRES: bytes >= kCachedBlockMinBytes.
void* take_cached_block(size_t bytes);
// Keeps `block` (of `bytes`, from allocate_block in core/memory_block.h) or frees it.
void give_cached_block(void* block, size_t bytes);

}  // namespace internal
}  // namespace sluice
