// The file seam: every file sluice reads or writes passes through these calls, as leveldb's Env
// and TensorFlow's FileSystem are the one way their code touches files. One place turns errno into
// sluice's errors, each naming the path, and one durability rule holds for everything written as
// a whole (checkpoints, caches, records, extracted archives, reports): the bytes go to a temporary
// file beside the target, which is synced, renamed over the target, and the folder synced. A
// reader then sees the old file or the whole new one, never a part, even after a crash; a write
// that fails leaves the old file as it was.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// Throws the sluice error for errno value `err` met while doing `what` ("cannot open", "read
// error") to `path`. The message is "<what> '<path>': <strerror>". NotFound for a missing path,
// PermissionDenied, AlreadyExists, InvalidArgument for a directory where a file was expected,
// ResourceExhausted for a full disk, a quota or a file size limit, DataLoss for an I/O error, and
// Unknown otherwise.
[[noreturn]] void throw_file_error(std::string_view what, const std::string& path, int err);

// The whole file's bytes, in as few read() calls as its size allows (one fstat and one read for a
// regular file; <fstream>'s stream iterators cost as much as decoding a small JPEG). Throws as
// throw_file_error says; a directory is InvalidArgument.
std::string read_whole_file(const std::string& path);
// The same bytes read into `buffer`, returned as a view of it (valid until `buffer` changes).
// The buffer only ever grows, to the largest file read plus one byte, and is not cleared: a
// thread reading file after file with one buffer allocates and zero-fills it once, not per file.
std::string_view read_whole_file(const std::string& path, std::string& buffer);

// A file read once from its start to its end (TFRecord files, caches).
class SequentialFile {
 public:
  // Throws NotFound for a missing file, InvalidArgument for a directory.
  explicit SequentialFile(std::string path);
  ~SequentialFile();
  SequentialFile(SequentialFile&& other) noexcept;
  SequentialFile& operator=(SequentialFile&& other) noexcept;
  SequentialFile(const SequentialFile&) = delete;
  SequentialFile& operator=(const SequentialFile&) = delete;

  // Reads up to n bytes into dst, fewer only at the end of the file. Throws DataLoss naming the
  // file on a read error.
  size_t read(char* dst, size_t n);
  // The same for the bytes at `offset`, leaving the position read() reads from as it is; several
  // threads may call it at once (a file read ahead on two threads).
  size_t read_at(uint64_t offset, char* dst, size_t n) const;
  // Moves n bytes on, fewer only at the end of the file; returns how many.
  uint64_t skip(uint64_t n);
  // The file's size now.
  uint64_t size() const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// What tells one state of a file's bytes from another without reading them: writing to a file
// changes its ctime, which no call can set back, and replacing it changes its inode.
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t ctime_ns = 0;  // Any write, truncation or change of mtime sets it to now.
  auto operator<=>(const FileIdentity&) const = default;
};

// A whole file mapped read-only into memory (mmap), for readers that hand out views of its bytes
// instead of copies (snapshot and saved-dataset shards). The pages are the page cache's: reading
// through the mapping costs no heap, however large the file. The mapping is private: a write
// through it copies the page for this mapping alone and never reaches the file. The file must not
// be truncated while mapped (the writers of such files replace them whole, so a reader keeps the
// old inode).
// Thread safety: the bytes may be read from any number of threads.
class MappedFile {
 public:
  // Throws as throw_file_error says: NotFound for a missing file, InvalidArgument for a directory.
  // An empty file maps to no bytes (data() null).
  explicit MappedFile(std::string path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const char* data() const { return data_; }
  uint64_t size() const { return size_; }
  std::string_view bytes() const { return {data_, static_cast<size_t>(size_)}; }
  const std::string& path() const { return path_; }
  // Whether [p, p + n) lies inside the mapping.
  bool contains(const void* p, size_t n = 1) const;

  // The file as it was once mapped: a later change to its bytes changes the identity of the file
  // on disk, but not this one.
  const FileIdentity& identity() const { return identity_; }
  // Whether the file had last changed at least `age_ns` before it was mapped. Timestamps move in
  // clock ticks (milliseconds), so a file that changes again within the tick of its last change
  // keeps its identity; one whose last change is older than that cannot change unseen.
  bool unchanged_for(int64_t age_ns) const { return identity_.ctime_ns <= mapped_at_ns_ - age_ns; }

 private:
  std::string path_;
  const char* data_ = nullptr;
  uint64_t size_ = 0;
  FileIdentity identity_;
  int64_t mapped_at_ns_ = 0;  // Wall-clock time, the clock of file timestamps.
};

// A file being written. Thread safety: none; one writer per file.
class WritableFile {
 public:
  // Replaces `path` as a whole: the bytes go to a temporary file in the same folder
  // ("<path>.tmp<pid>"), and close() syncs it, renames it over `path` and syncs the folder. Until
  // then, and whenever a write fails or the file is destroyed without close(), `path` keeps its
  // old contents and the temporary file is removed. The folder must exist.
  static WritableFile replace(std::string path);
  // Creates or truncates `path` and writes it in place, for a file that readers follow as it grows
  // (TensorBoard event files) or one inside a folder that is itself put in place as a whole
  // (replace_folder). close() does not sync it; call sync() first where that matters.
  static WritableFile create(std::string path);
  // Creates `path`, which must not exist (AlreadyExists otherwise), and writes it in place: a
  // lock file that one writer at a time can hold.
  static WritableFile create_new(std::string path);

  // Closes without syncing, ignoring errors; removes an unclosed replacement's temporary file.
  ~WritableFile();
  WritableFile(WritableFile&& other) noexcept;
  WritableFile& operator=(WritableFile&& other) noexcept;
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;

  // Each throws an error naming the file (see throw_file_error); after one, the file is closed
  // (a replacement's temporary removed) and only the destructor may follow.
  void append(std::string_view bytes);
  void sync();
  // Closes the file; for a replacement, syncs and renames it into place. Idempotent.
  void close();

  // The path the bytes end up at.
  const std::string& path() const { return path_; }
  // Where the bytes written so far are: a replacement's temporary file until close(), else path().
  const std::string& written_path() const { return temporary_.empty() ? path_ : temporary_; }

 private:
  WritableFile(std::string path, std::string temporary, int extra_flags = 0);
  void abandon() noexcept;

  std::string path_;
  std::string temporary_;  // A replacement's temporary file; empty for create().
  int fd_ = -1;
};

// What the name of a temporary file WritableFile::replace made says ("<target>.tmp<pid>"): the
// file name of its target and the writer's process id. nullopt for any other file name. A
// process that dies mid-write leaves such a file; one whose writer is gone can be removed.
struct ReplacementName {
  std::string target;
  long long writer = 0;
};
std::optional<ReplacementName> parse_replacement_name(std::string_view file_name);

// WritableFile::replace(path), the contents appended, closed.
void write_file_atomically(const std::string& path, std::string_view contents);

// Renames each of `temporaries[i]`, already written and synced, over `targets[i]` in the same
// folder, then syncs the folders: the last step of writing a set of files (the shards of a
// record set) that only appear once all of them are complete.
void rename_into_place(const std::vector<std::string>& temporaries,
                       const std::vector<std::string>& targets);

// Puts the folder `staging`, written with WritableFile::create, in place as `target` (which must
// not exist or be an empty folder): syncs the file system the folder is on once (rather than
// each of its files), renames it and syncs the parent folder.
void replace_folder(const std::string& staging, const std::string& target);

}  // namespace sluice
