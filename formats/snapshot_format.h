// The snapshot format: how Dataset::save, Dataset::load and Dataset::snapshot keep decoded
// elements on disk, laid out so that a reader maps the files and points tensors into them
// without a copy (as FFCV serves its .beton files).
//
// A snapshot is a folder holding
//   snapshot.metadata        the element spec, the shards, their element counts and sizes, and
//                            the fingerprint of the pipeline that wrote them;
//   shard-<index>.snapshot   one per shard (the index in at least five digits), the elements.
// The folder is written under another name and renamed into place once every file in it is
// complete, so a folder of this layout is always whole; readers still check every record, the
// first time the process reads it from the file as it is (SnapshotReader).
//
// Shard file, little-endian:
//   header, 64 bytes:  "SLSNAPSH" · u32 version (1) · u32 compression (0 none, 1 zlib, 2 gzip) ·
//                      zeros
//   records, each at an offset that is a multiple of 64:
//     u64 body length · u32 masked CRC-32C of those 8 bytes · u32 masked CRC-32C of the body ·
//     body · zeros up to the next multiple of 64
//   body, uncompressed: one element in core/element_codec.h's aligned encoding, whose origin is
//     the file's first byte: every numeric payload starts at a multiple of 64 in the file, so a
//     tensor can point at it in the mapping.
//   body, compressed: u64 length of that encoding · the encoding deflated with a zlib or gzip
//     wrapper (RFC 1950 / 1952); it is inflated into a 64-byte-aligned buffer placed as the
//     record would lie in the file, and the tensors point into that buffer.
// Metadata file, little-endian:
//   "SLSNAPMD" · u32 version (1) · u64 payload length · u32 masked CRC-32C of the payload · payload
//   payload: u64 fingerprint · u32 compression · u32 components · per component: u8 dtype ·
//     u8 rank · u16 name length · name · i64 dims[rank] (-1 where elements differ) ·
//     u32 shards · per shard: i64 index · u64 elements · u64 file bytes
//
// Every problem a reader finds — a bad magic, length or CRC, a record past the end, a file of
// another size than the metadata says, an element that does not match the spec — is DataLoss
// naming the file and the byte offset of the record at fault.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/core/file_system.h"
#include "sluice/formats/compression.h"

namespace sluice {

inline constexpr uint32_t kSnapshotVersion = 1;
inline constexpr char kSnapshotMetadataName[] = "snapshot.metadata";

// One component of every element: its name, dtype and shape, -1 for a dimension that differs
// between elements (tf.TensorSpec's None).
struct ComponentSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> dims;
  bool operator==(const ComponentSpec&) const = default;
};
using ElementSpec = std::vector<ComponentSpec>;

// "name: dtype[d0, d1]" per component, -1 shown as "?" (for errors and the fingerprint).
std::string element_spec_string(const ElementSpec& spec);

struct SnapshotShard {
  int64_t index = 0;
  uint64_t elements = 0;
  uint64_t bytes = 0;
};

struct SnapshotMetadata {
  uint64_t fingerprint = 0;
  Compression compression = Compression::kNone;  // kNone, kZlib or kGzip.
  ElementSpec spec;
  std::vector<SnapshotShard> shards;  // By increasing index.

  uint64_t elements() const;
};

// "<folder>/shard-<index>.snapshot".
std::string snapshot_shard_path(const std::string& folder, int64_t index);

// Reads "<folder>/snapshot.metadata". NotFound naming the file when it is missing; DataLoss
// naming it and the offset when it is corrupt or truncated.
SnapshotMetadata read_snapshot_metadata(const std::string& folder);

// Writes the files of a snapshot into `folder`, which must exist and is put in place by the
// caller once finish() returned (replace_folder). Elements are written in blocks; each shard is
// opened on its first element. Thread safety: none.
class SnapshotWriter {
 public:
  // compression: kNone, kZlib or kGzip (InvalidArgument otherwise).
  SnapshotWriter(std::string folder, Compression compression);
  ~SnapshotWriter();
  SnapshotWriter(const SnapshotWriter&) = delete;
  SnapshotWriter& operator=(const SnapshotWriter&) = delete;

  // Appends `element` to shard `shard` (>= 0). The first element sets the spec; a later one of
  // other component names, dtypes or ranks is InvalidArgument naming it as element `index`, and
  // dimensions that differ become -1.
  void write(const Element& element, int64_t shard, int64_t index);
  // Writes what is pending, syncs and closes every shard and writes the metadata. Nothing may
  // follow.
  void finish(uint64_t fingerprint);

  const ElementSpec& spec() const { return spec_; }

 private:
  struct Shard;
  Shard& shard(int64_t index);

  std::string folder_;
  Compression compression_;
  ElementSpec spec_;
  bool have_spec_ = false;
  std::vector<std::unique_ptr<Shard>> shards_;  // By increasing index.
  std::string scratch_;
};

// Where a reader stands: the shard (its position in the metadata's list), the element within
// it and that element's byte offset in the shard file.
struct SnapshotPosition {
  size_t shard = 0;
  uint64_t element = 0;
  uint64_t offset = 0;
};

class CheckedRecords;

// Reads a snapshot's elements, shard after shard in index order, each in the order written.
// Shards are mapped (core/file_system.h MappedFile) when reached; numeric tensors of uncompressed
// snapshots point into the mapping, which they keep alive.
// A record's body checksum is checked the first time the process reads the record from its file
// as the file is (its FileIdentity), and once passed not again while that identity stays and the
// file had last changed over a second before: serving the next epoch of decoded images from the
// page cache then costs no pass over their bytes. A file written to since has another ctime and
// is checked anew. Headers, lengths and the element's layout are checked on every read.
// Thread safety: none; readers of one snapshot may run on any threads at once.
class SnapshotReader {
 public:
  // Reads the metadata (see read_snapshot_metadata).
  explicit SnapshotReader(std::string folder);
  SnapshotReader(std::string folder, SnapshotMetadata metadata);

  const SnapshotMetadata& metadata() const { return metadata_; }
  const std::string& folder() const { return folder_; }

  // The CRC-32C of a record body (the reader checks each with it): crc32c by default; a caller
  // with threads to spare checks the parts of large records on several (crc32c_combine), since
  // the checksum is what serving a record mostly costs.
  using Checksum = std::function<uint32_t(std::string_view)>;
  void set_checksum(Checksum checksum) { checksum_ = std::move(checksum); }

  // The next element, nullopt at the end. DataLoss as the file comment says.
  std::optional<Element> next();
  // The position of the next element.
  SnapshotPosition position() const;
  // Continues from `position` (as position() returned, in a reader of the same snapshot).
  // FailedPrecondition when it lies outside the snapshot; a record that does not check out there
  // is DataLoss on the next call to next().
  void seek(const SnapshotPosition& position);

  // The mapping of the shard being read, or null (for tests of zero-copy reading).
  const MappedFile* mapped_shard() const { return file_.get(); }

 private:
  void open_shard();

  std::string folder_;
  SnapshotMetadata metadata_;
  size_t shard_ = 0;
  uint64_t element_ = 0;
  uint64_t offset_ = 0;
  std::shared_ptr<const MappedFile> file_;  // The shard `shard_`, once opened.
  // The records of file_ already checked, shared with the process's other readers of the file as
  // it is; null where the file changed too recently or the reader did not start at the shard's
  // first record.
  std::shared_ptr<CheckedRecords> checked_;
  Checksum checksum_;  // Unset: crc32c.
};

}  // namespace sluice
