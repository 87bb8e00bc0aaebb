#include "sluice/core/memory_block.h"

#include <sys/mman.h>

#include <new>

namespace sluice::internal {
namespace {

std::align_val_t alignment_for(size_t bytes) {
  return std::align_val_t{bytes >= kHugePageBytes ? kHugePageBytes : kBlockAlignment};
}

}  // namespace

void* allocate_block(size_t bytes) {
  void* block = ::operator new(bytes, alignment_for(bytes));
#if defined(MADV_HUGEPAGE)
  if (bytes >= kHugePageBytes) {
    // Advice only: without transparent huge pages the block keeps small ones. The whole huge
    // pages of the block, which starts on one.
    (void)madvise(block, bytes / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
  }
#endif
  return block;
}

void free_block(void* block, size_t bytes) noexcept {
  ::operator delete(block, alignment_for(bytes));
}

}  // namespace sluice::internal
