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
namespace {

// The file's bytes into buffer[0, returned size); buffer.size() is never reduced.
size_t read_into(const std::string& path, std::string& buffer) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw NotFound(str_cat(path, ": cannot open: ", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw InvalidArgument(str_cat(path, " is a directory, not a file"));
  }
  // One byte more than the size, so a file that has not grown ends at the first short read.
  const size_t wanted_size = st.st_size > 0 ? static_cast<size_t>(st.st_size) + 1 : 4096;
  if (buffer.size() < wanted_size) buffer.resize(wanted_size);
  size_t size = 0;
  while (true) {
    if (size == buffer.size()) buffer.resize(buffer.size() * 2);
    const size_t wanted = buffer.size() - size;
    const ssize_t got = ::read(fd, buffer.data() + size, wanted);
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
  return size;
}

}  // namespace

std::string read_file_bytes(const std::string& path) {
  std::string bytes;
  bytes.resize(read_into(path, bytes));
  return bytes;
}

std::string_view read_file_bytes(const std::string& path, std::string& buffer) {
  return std::string_view(buffer.data(), read_into(path, buffer));
}

}  // namespace sluice
