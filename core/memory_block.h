// Memory blocks for tensor data, as core's buffers and the model's tensor pool take them: aligned
// to kBlockAlignment bytes and, from kHugePageBytes on, to huge pages and marked for them. A fresh
// block is faulted in a page at a time as it is first written, and in 4 KiB pages that costs: on
// a virtual machine about 11 µs a page, so that filling a fresh 151 MB tensor took 420 ms,
// against 16 ms in 2 MiB pages (Linux's transparent huge pages, which its "madvise" mode grants
// only to memory marked for them).
#pragma once

#include <cstddef>

namespace sluice::internal {

inline constexpr size_t kBlockAlignment = 64;
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// A block of `bytes`, aligned as above. Throws std::bad_alloc.
void* allocate_block(size_t bytes);
// Frees a block that allocate_block(bytes) gave.
void free_block(void* block, size_t bytes) noexcept;

}  // namespace sluice::internal
