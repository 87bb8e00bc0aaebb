#include "sluice/strategy/host_shared_memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "sluice/core/errors.h"

namespace sluice::internal {
namespace {

std::string unique_name(const std::string& what) {
  return "/sluice-test-" + std::to_string(getpid()) + "-" + what;
}

// What one mapping writes, another mapping of the same object reads, before and after the name
// is removed; the name is gone for new openers.
TEST(HostSharedMemoryTest, AnotherMappingReadsWhatTheCreatorWrites) {
  const std::string name = unique_name("shared");
  constexpr size_t kBytes = 3 * 4096 + 100;
  HostSharedMemory writer = HostSharedMemory::create(name, kBytes);
  ASSERT_EQ(writer.size(), kBytes);
  for (size_t i = 0; i < kBytes; ++i) EXPECT_EQ(writer.data()[i], 0) << i;
  std::memset(writer.data(), 7, kBytes);
  HostSharedMemory reader = HostSharedMemory::open(name, kBytes);
  HostSharedMemory::unlink(name);
  EXPECT_EQ(reader.data()[kBytes - 1], 7);
  writer.data()[kBytes - 1] = 9;
  EXPECT_EQ(reader.data()[kBytes - 1], 9);
  EXPECT_THROW(HostSharedMemory::open(name, kBytes), Internal);
  HostSharedMemory moved = std::move(reader);
  EXPECT_EQ(reader.data(), nullptr);
  EXPECT_EQ(moved.data()[0], 7);
}

TEST(HostSharedMemoryTest, RefusesATakenNameAndAShortObjectNamingThem) {
  const std::string name = unique_name("taken");
  HostSharedMemory first = HostSharedMemory::create(name, 4096);
  try {
    HostSharedMemory::create(name, 4096);
    ADD_FAILURE() << "a second create of " << name << " succeeded";
  } catch (const Internal& e) {
    EXPECT_NE(std::string(e.what()).find(name + ": shm_open failed"), std::string::npos)
        << e.what();
  }
  try {
    HostSharedMemory::open(name, 8192);
    ADD_FAILURE() << "mapped 8192 bytes of a 4096-byte object";
  } catch (const Internal& e) {
    EXPECT_NE(std::string(e.what()).find(name + ": holds 4096 bytes, not 8192"), std::string::npos)
        << e.what();
  }
  HostSharedMemory::unlink(name);
}

// Memory the host cannot give is refused at once, not with SIGBUS when first written, and the
// failed object leaves no name behind.
TEST(HostSharedMemoryTest, MemoryTheHostLacksIsRefusedUpFront) {
  const std::string name = unique_name("huge");
  EXPECT_THROW(HostSharedMemory::create(name, size_t{1} << 56), Error);
  EXPECT_THROW(HostSharedMemory::open(name, 1), Internal);
}

}  // namespace
}  // namespace sluice::internal
