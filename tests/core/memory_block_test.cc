// Memory blocks: small ones aligned for vectors, large ones on huge pages and marked for them, so
// that where Linux's transparent huge pages are on (even only for marked memory) a large tensor's
// memory may take them.
#include "sluice/core/memory_block.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "sluice/core/tensor.h"

namespace sluice::internal {
namespace {

// The "Key: value" lines of /proc/self/smaps for the mapping that holds `address`: empty when none
// does or the file is absent.
std::map<std::string, std::string> mapping_of(const void* address) {
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::map<std::string, std::string> fields;
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long long begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &begin, &end) == 2 && line.find(':') > 8) {
      if (inside) break;
      inside = at >= begin && at < end;
      continue;
    }
    if (!inside) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::istringstream value(line.substr(colon + 1));
    value >> fields[line.substr(0, colon)];
  }
  return fields;
}

// Whether transparent huge pages may back marked memory here: "always" or "madvise".
bool huge_pages_for_marked_memory() {
  std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(enabled, modes);
  return modes.find("[always]") != std::string::npos ||
         modes.find("[madvise]") != std::string::npos;
}

TEST(MemoryBlockTest, SmallBlocksAreAlignedForVectors) {
  for (const size_t bytes : {size_t{1}, size_t{64}, size_t{1000}, kHugePageBytes - 1}) {
    void* block = allocate_block(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % kBlockAlignment, 0u) << bytes;
    std::memset(block, 1, bytes);
    free_block(block, bytes);
  }
}

TEST(MemoryBlockTest, ALargeTensorLiesOnHugePagesMarkedForThem) {
  const size_t bytes = 3 * kHugePageBytes + 123;
  void* block = allocate_block(bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % kHugePageBytes, 0u);
  std::memset(block, 1, bytes);
  const std::map<std::string, std::string> block_mapping = mapping_of(block);
  free_block(block, bytes);
  // A tensor's memory is such a block.
  Tensor large(DType::kFloat32, Shape{int64_t{1} << 20});  // 4 MiB
  const std::map<std::string, std::string> tensor_mapping = mapping_of(large.raw_data());
  if (!huge_pages_for_marked_memory() || !block_mapping.contains("THPeligible")) {
    GTEST_SKIP() << "this kernel has no transparent huge pages for marked memory";
  }
  EXPECT_EQ(block_mapping.at("THPeligible"), "1");
  EXPECT_EQ(tensor_mapping.at("THPeligible"), "1");
}

}  // namespace
}  // namespace sluice::internal
