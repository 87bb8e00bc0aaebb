#include "formats/file_bytes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/errors.h"
#include "core/strings.h"

namespace sluice {

std::string read_file_bytes(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw NotFound(str_cat(path, ": cannot open: ", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw InvalidArgument(str_cat(path, " is a directory, not a file"));
  }
  std::string bytes;
  // One byte more than the size, so a file that has not grown ends at the first short read.
  bytes.resize(st.st_size > 0 ? static_cast<size_t>(st.st_size) + 1 : 4096);
  size_t size = 0;
  while (true) {
    if (size == bytes.size()) bytes.resize(bytes.size() * 2);
    const size_t wanted = bytes.size() - size;
    const ssize_t got = ::read(fd, bytes.data() + size, wanted);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int err = errno;
      ::close(fd);
      throw DataLoss(str_cat(path, ": read error: ", std::strerror(err)));
    }
    if (got == 0) break;
    size += static_cast<size_t>(got);
    // A short read of a regular file that has delivered its whole size is its end: skip the
    // read() that would return 0 (one system call per image of a folder).
    const bool whole = S_ISREG(st.st_mode) && size >= static_cast<size_t>(st.st_size);
    if (whole && static_cast<size_t>(got) < wanted) break;
  }
  ::close(fd);
  bytes.resize(size);
  return bytes;
}

}  // namespace sluice
