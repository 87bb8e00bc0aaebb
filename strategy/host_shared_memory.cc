#include "sluice/strategy/host_shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"

namespace sluice::internal {
namespace {

std::string failure(const char* call, const std::string& name, int error) {
  return str_cat("shared memory ", name, ": ", call, " failed: ", std::strerror(error));
}

// Maps the open `fd` whole, its pages mapped at once: a step that first touched them would pay a
// page fault for every 4 KiB of them.
char* map(int fd, const std::string& name, size_t bytes, int protection) {
  void* data = mmap(nullptr, bytes, protection, MAP_SHARED | MAP_POPULATE, fd, 0);
  const int error = errno;
  close(fd);
  if (data == MAP_FAILED) throw Internal(failure("mmap", name, error));
  return static_cast<char*>(data);
}

}  // namespace

HostSharedMemory HostSharedMemory::create(const std::string& name, size_t bytes) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) throw Internal(failure("shm_open", name, errno));
  // Reserved now, not when first written: a full /dev/shm would otherwise kill the process with
  // SIGBUS in the middle of a step.
  if (const int error = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); error != 0) {
    close(fd);
    shm_unlink(name.c_str());
    if (error == ENOSPC) {
      throw ResourceExhausted(str_cat("shared memory ", name, ": no room for ", bytes,
                                      " bytes in the host's shared memory (/dev/shm)"));
    }
    throw Internal(failure("posix_fallocate", name, error));
  }
  try {
    return HostSharedMemory(map(fd, name, bytes, PROT_READ | PROT_WRITE), bytes);
  } catch (...) {
    shm_unlink(name.c_str());
    throw;
  }
}

HostSharedMemory HostSharedMemory::open(const std::string& name, size_t bytes) {
  const int fd = shm_open(name.c_str(), O_RDONLY, 0);
  if (fd < 0) throw Internal(failure("shm_open", name, errno));
  // Reading past the object's end would end the process with SIGBUS.
  struct stat status {};
  if (fstat(fd, &status) != 0 || static_cast<size_t>(status.st_size) < bytes) {
    close(fd);
    throw Internal(
        str_cat("shared memory ", name, ": holds ", status.st_size, " bytes, not ", bytes));
  }
  return HostSharedMemory(map(fd, name, bytes, PROT_READ), bytes);
}

void HostSharedMemory::unlink(const std::string& name) { shm_unlink(name.c_str()); }

HostSharedMemory::HostSharedMemory(HostSharedMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

HostSharedMemory& HostSharedMemory::operator=(HostSharedMemory&& other) noexcept {
  if (this != &other) {
    if (data_) munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

HostSharedMemory::~HostSharedMemory() {
  if (data_) munmap(data_, size_);
}

}  // namespace sluice::internal
