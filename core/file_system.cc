#include "sluice/core/file_system.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

// Between a replacement's target and its writer's pid in its temporary file's name.
constexpr std::string_view kReplacementMark = ".tmp";

int64_t nanoseconds(const timespec& t) { return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }

// Opens `path` read-only; a directory is refused as EISDIR would be.
int open_for_reading(const std::string& path, struct stat* st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_file_error("cannot open", path, errno);
  if (::fstat(fd, st) != 0) {
    const int err = errno;
    ::close(fd);
    throw_file_error("cannot stat", path, err);
  }
  if (S_ISDIR(st->st_mode)) {
    ::close(fd);
    throw_file_error("cannot read", path, EISDIR);
  }
  return fd;
}

// Reads up to n bytes, fewer only at the end of the file: at the file's position, or at `offset`
// when given.
size_t read_fully(int fd, const std::string& path, char* dst, size_t n,
                  std::optional<uint64_t> offset = std::nullopt) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = offset
                            ? ::pread(fd, dst + done, n - done, static_cast<off_t>(*offset + done))
                            : ::read(fd, dst + done, n - done);
    if (got > 0) {
      done += static_cast<size_t>(got);
    } else if (got == 0) {
      break;
    } else if (errno != EINTR) {
      throw_file_error("read error in", path, errno);
    }
  }
  return done;
}

// The whole file into buffer[0, returned size); buffer.size() is never reduced.
size_t read_into(const std::string& path, std::string& buffer) {
  struct stat st {};
  const int fd = open_for_reading(path, &st);
  try {
    // One byte more than the size, so a file that has not grown ends at the first short read.
    const size_t wanted_size = st.st_size > 0 ? static_cast<size_t>(st.st_size) + 1 : 4096;
    if (buffer.size() < wanted_size) buffer.resize(wanted_size);
    size_t size = 0;
    while (true) {
      if (size == buffer.size()) buffer.resize(buffer.size() * 2);
      const size_t wanted = buffer.size() - size;
      const ssize_t got = ::read(fd, buffer.data() + size, wanted);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw_file_error("read error in", path, errno);
      if (got == 0) break;
      size += static_cast<size_t>(got);
      // A short read of a regular file that has delivered its whole size is its end: skip the
      // read() that would return 0 (one system call per image of a folder).
      const bool whole = S_ISREG(st.st_mode) && size >= static_cast<size_t>(st.st_size);
      if (whole && static_cast<size_t>(got) < wanted) break;
    }
    ::close(fd);
    return size;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

std::string parent_folder(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// Durability of a rename is the folder's: sync it. Best effort where a folder cannot be opened
// for that (some file systems), as the rename itself has happened.
void sync_folder(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void throw_file_error(std::string_view what, const std::string& path, int err) {
  const std::string message = str_cat(what, " '", path, "': ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      throw NotFound(message);
    case EACCES:
    case EPERM:
    case EROFS:
      throw PermissionDenied(message);
    case EEXIST:
      throw AlreadyExists(message);
    case EISDIR:
      throw InvalidArgument(message);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case EMFILE:
    case ENFILE:
    case ENOMEM:
      throw ResourceExhausted(message);
    case EIO:
      throw DataLoss(message);
    default:
      throw Unknown(message);
  }
}

std::string read_whole_file(const std::string& path) {
  std::string bytes;
  bytes.resize(read_into(path, bytes));
  return bytes;
}

std::string_view read_whole_file(const std::string& path, std::string& buffer) {
  return std::string_view(buffer.data(), read_into(path, buffer));
}

SequentialFile::SequentialFile(std::string path) : path_(std::move(path)) {
  struct stat st {};
  fd_ = open_for_reading(path_, &st);
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
}

SequentialFile::~SequentialFile() {
  if (fd_ >= 0) ::close(fd_);
}

SequentialFile::SequentialFile(SequentialFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

SequentialFile& SequentialFile::operator=(SequentialFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

size_t SequentialFile::read(char* dst, size_t n) { return read_fully(fd_, path_, dst, n); }

size_t SequentialFile::read_at(uint64_t offset, char* dst, size_t n) const {
  return read_fully(fd_, path_, dst, n, offset);
}

uint64_t SequentialFile::skip(uint64_t n) {
  struct stat st {};
  const off_t at = ::lseek(fd_, 0, SEEK_CUR);
  if (at < 0 || ::fstat(fd_, &st) != 0) throw_file_error("cannot seek in", path_, errno);
  const uint64_t left = st.st_size > at ? static_cast<uint64_t>(st.st_size - at) : 0;
  const uint64_t k = std::min(n, left);
  if (::lseek(fd_, static_cast<off_t>(k), SEEK_CUR) < 0) {
    throw_file_error("cannot seek in", path_, errno);
  }
  return k;
}

uint64_t SequentialFile::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw_file_error("cannot stat", path_, errno);
  return static_cast<uint64_t>(st.st_size);
}

WritableFile::WritableFile(std::string path, std::string temporary, int extra_flags)
    : path_(std::move(path)), temporary_(std::move(temporary)) {
  const std::string& target = temporary_.empty() ? path_ : temporary_;
  fd_ = ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | extra_flags, 0644);
  if (fd_ < 0) throw_file_error("cannot create", path_, errno);  // The temporary is ours.
}

WritableFile WritableFile::replace(std::string path) {
  // Unique per process, so concurrent writers of one path cannot interleave their bytes; a
  // process that dies leaves the name of its pid, which tells a later run it is abandoned
  // (parse_replacement_name).
  std::string temporary = str_cat(path, kReplacementMark, static_cast<long long>(::getpid()));
  return WritableFile(std::move(path), std::move(temporary));
}

WritableFile WritableFile::create(std::string path) { return WritableFile(std::move(path), ""); }

WritableFile WritableFile::create_new(std::string path) {
  return WritableFile(std::move(path), "", O_EXCL);
}

WritableFile::~WritableFile() { abandon(); }

WritableFile::WritableFile(WritableFile&& other) noexcept
    : path_(std::move(other.path_)),
      temporary_(std::move(other.temporary_)),
      fd_(std::exchange(other.fd_, -1)) {}

WritableFile& WritableFile::operator=(WritableFile&& other) noexcept {
  if (this != &other) {
    abandon();
    path_ = std::move(other.path_);
    temporary_ = std::move(other.temporary_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void WritableFile::abandon() noexcept {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

void WritableFile::append(std::string_view bytes) {
  if (fd_ < 0) throw FailedPrecondition(str_cat("cannot write '", path_, "': it is closed"));
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      abandon();
      throw_file_error("cannot write", path_, err);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

void WritableFile::sync() {
  if (fd_ < 0) throw FailedPrecondition(str_cat("cannot sync '", path_, "': it is closed"));
  if (::fsync(fd_) != 0) {
    const int err = errno;
    abandon();
    throw_file_error("cannot sync", path_, err);
  }
}

void WritableFile::close() {
  if (fd_ < 0) return;
  if (!temporary_.empty()) sync();
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    const int err = errno;
    if (!temporary_.empty()) ::unlink(temporary_.c_str());
    throw_file_error("cannot write", path_, err);
  }
  if (!temporary_.empty()) {
    try {
      rename_into_place({temporary_}, {path_});
    } catch (...) {
      ::unlink(temporary_.c_str());
      throw;
    }
  }
}

std::optional<ReplacementName> parse_replacement_name(std::string_view file_name) {
  const size_t mark = file_name.rfind(kReplacementMark);
  if (mark == std::string_view::npos || mark + kReplacementMark.size() == file_name.size()) {
    return std::nullopt;
  }
  long long pid = 0;
  for (char c : file_name.substr(mark + kReplacementMark.size())) {
    if (c < '0' || c > '9' || pid > 1'000'000'000) return std::nullopt;
    pid = pid * 10 + (c - '0');
  }
  if (pid == 0) return std::nullopt;  // No writer has pid 0 (and kill(0, ...) means a group).
  return ReplacementName{std::string(file_name.substr(0, mark)), pid};
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  WritableFile file = WritableFile::replace(path);
  file.append(contents);
  file.close();
}

void rename_into_place(const std::vector<std::string>& temporaries,
                       const std::vector<std::string>& targets) {
  if (temporaries.size() != targets.size()) {
    throw InvalidArgument(str_cat("rename_into_place: ", temporaries.size(), " files for ",
                                  targets.size(), " targets"));
  }
  std::set<std::string> folders;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (::rename(temporaries[i].c_str(), targets[i].c_str()) != 0) {
      throw_file_error("cannot rename into", targets[i], errno);
    }
    folders.insert(parent_folder(targets[i]));
  }
  for (const std::string& folder : folders) sync_folder(folder);
}

void replace_folder(const std::string& staging, const std::string& target) {
  const int fd = ::open(staging.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_file_error("cannot open", staging, errno);
  const int synced = ::syncfs(fd);
  const int err = errno;
  ::close(fd);
  if (synced != 0) throw_file_error("cannot sync", staging, err);
  std::error_code ec;
  if (fs::is_directory(target, ec) && fs::is_empty(target, ec)) fs::remove(target, ec);
  rename_into_place({staging}, {target});
}

MappedFile::MappedFile(std::string path) : path_(std::move(path)) {
  // The clock is read before the file and the identity taken after the mapping: a change made
  // while mapping leaves a ctime no older than mapped_at_ns_, so unchanged_for() denies it.
  timespec now = {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  mapped_at_ns_ = nanoseconds(now);
  struct stat st = {};
  const int fd = open_for_reading(path_, &st);
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ > 0) {
    // Private and writable: a write through a tensor over the mapping copies that page for this
    // mapping alone instead of faulting; the file itself is never changed.
    void* p =
        ::mmap(nullptr, static_cast<size_t>(size_), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    const int err = errno;
    if (p == MAP_FAILED) {
      ::close(fd);
      throw_file_error("cannot map", path_, err);
    }
    data_ = static_cast<const char*>(p);
    // Readers go through the file once, front to back.
    ::madvise(p, static_cast<size_t>(size_), MADV_SEQUENTIAL);
  }
  const bool stat_again = size_ == 0 || ::fstat(fd, &st) == 0;
  ::close(fd);
  identity_ = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
               static_cast<uint64_t>(st.st_size), nanoseconds(st.st_ctim)};
  // Without the second look the identity may be older than the mapping: never call it unchanged.
  if (!stat_again) identity_.ctime_ns = std::numeric_limits<int64_t>::max();
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), static_cast<size_t>(size_));
}

bool MappedFile::contains(const void* p, size_t n) const {
  const auto* c = static_cast<const char*>(p);
  return data_ != nullptr && c >= data_ && n <= size_ &&
         c - data_ <= static_cast<ptrdiff_t>(size_ - n);
}

}  // namespace sluice
