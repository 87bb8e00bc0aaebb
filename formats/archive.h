// Archives (zip, tar, tar.gz and the other formats libarchive reads): stream their members as
// (path, bytes) without extracting, or extract them to a directory safely — refusing members that
// would land outside it, links that leave it, device files and decompression bombs.
//
// Thread safety: an ArchiveReader is used by one thread at a time; the functions are reentrant.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace sluice {

enum class ArchiveEntryType { kFile, kDirectory, kSymlink, kHardlink, kOther };

struct ArchiveEntry {
  std::string path;         // As stored in the archive.
  ArchiveEntryType type = ArchiveEntryType::kFile;
  int64_t size = 0;         // Bytes of a regular file as the header says (-1 when unknown).
  std::string link_target;  // For links.
  uint32_t mode = 0;        // Permission bits.
};

// Reads members one at a time, straight from the (possibly compressed) archive file.
class ArchiveReader {
 public:
  // Opens `path`. Throws NotFound when it cannot be opened, InvalidArgument when it is not an
  // archive libarchive recognises.
  explicit ArchiveReader(std::string path);
  ~ArchiveReader();
  ArchiveReader(ArchiveReader&&) noexcept;
  ArchiveReader& operator=(ArchiveReader&&) noexcept;

  // The next member's header, or false at the end. Throws DataLoss naming the archive and the
  // member before it for a corrupt archive.
  bool next(ArchiveEntry& entry);
  // The current member's bytes (empty for non-files). Throws ResourceExhausted naming the member
  // past `max_bytes`, InvalidArgument for an encrypted member, DataLoss for a corrupt one.
  std::string read_data(int64_t max_bytes = int64_t{1} << 31);
  // Reads the current member's bytes in blocks, calling sink(data, size) for each; same errors.
  template <class Sink>
  void read_blocks(Sink&& sink) {
    char buffer[64 << 10];
    while (size_t n = read_block(buffer, sizeof(buffer))) sink(buffer, n);
  }

  const std::string& path() const { return path_; }
  // Bytes of the archive file itself consumed so far (compressed).
  int64_t compressed_offset() const;

 private:
  size_t read_block(char* buffer, size_t size);
  struct State;
  std::string path_;
  std::unique_ptr<State> state_;
};

struct ExtractOptions {
  // Bomb limits: total bytes written, and total bytes written per byte of archive file (checked
  // once more than ratio_grace_bytes have been written, so small archives of repetitive data
  // still extract).
  int64_t max_total_bytes = int64_t{16} << 30;
  double max_ratio = 200.0;
  int64_t ratio_grace_bytes = int64_t{16} << 20;
  int64_t max_members = 10'000'000;
};

struct ExtractResult {
  int64_t files = 0;  // Regular files and links written.
  int64_t bytes = 0;  // Bytes of file data written.
};

// Extracts `archive_path` into `dir`, which must not exist or be empty. Everything is written into
// a sibling staging directory that becomes `dir` only on success; on any error it is removed, so
// nothing half-written is left. Refuses, naming the member (InvalidArgument): absolute paths, `..`
// components, links whose target is absolute or leaves `dir`, paths through a link, device files,
// FIFOs and sockets, encrypted members. ResourceExhausted when a bomb limit is crossed, DataLoss
// for a corrupt member, AlreadyExists when `dir` is not empty.
ExtractResult extract_archive(const std::string& archive_path, const std::string& dir,
                              const ExtractOptions& options = {});

}  // namespace sluice
