// Memory that processes on one host share: a POSIX shared memory object that one process creates
// and writes, and others open to read, each through a mapping of its own. The workers of a job on
// one host pass their gradients this way instead of copying them through messages.
#pragma once

#include <cstddef>
#include <string>

namespace sluice::internal {

class HostSharedMemory {
 public:
  // Creates the object `name` ("/..." of at most NAME_MAX characters) with `bytes` of memory
  // reserved, zeroed and mapped for writing. Throws ResourceExhausted when the host's shared
  // memory (/dev/shm) has no room for it, Internal for other failures; either names the object.
  static HostSharedMemory create(const std::string& name, size_t bytes);
  // Maps the object another process created, of `bytes`, for reading. Throws Internal naming it.
  static HostSharedMemory open(const std::string& name, size_t bytes);
  // Removes the name: the memory stays while mapped, and goes with the last mapping (the last
  // process's exit at the latest), so nothing is left behind on the host.
  static void unlink(const std::string& name);

  HostSharedMemory() = default;  // Maps nothing.
  HostSharedMemory(HostSharedMemory&& other) noexcept;
  HostSharedMemory& operator=(HostSharedMemory&& other) noexcept;
  ~HostSharedMemory();

  char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  HostSharedMemory(char* data, size_t size) : data_(data), size_(size) {}
  char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace sluice::internal
