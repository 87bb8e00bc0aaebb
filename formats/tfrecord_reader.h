// TFRecordReader: reads the records of one TFRecord file in order, checking the length CRC and
// the payload CRC of every record. It knows the framing (uint64 length, masked CRC-32C of the
// length, payload, masked CRC-32C of the payload) and the compression, nothing of the payloads.
//
// Buffers: one read buffer of `buffer_size` bytes, for ZLIB/GZIP also a compressed-input buffer of
// that size, and one scratch string for large records (the latest one only; it grows as the
// record's bytes arrive, never ahead of them by more than 4 MiB, up to `max_record_size`); with
// read_ahead, four blocks of about 1.25 * `buffer_size` filled by the helper thread and the calling
// thread instead of the read buffer.
// Thread safety: none; use one reader per thread. Readers are movable, not copyable.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/formats/compression.h"

namespace sluice {

// The largest record a reader accepts by default: 256 MiB. A tf.train.Example holding even a large
// image is a few MiB, and a length field that passes its CRC can still claim anything (2^40 bytes
// followed by a stream of compressed zeros), so the bound is what keeps memory in check.
inline constexpr uint64_t kDefaultMaxRecordSize = uint64_t{256} << 20;

struct TFRecordReaderOptions {
  // kAuto resolves to GZIP or none from the file's first bytes (detect_compression).
  Compression compression = Compression::kNone;
  // Bytes read from the file (after decompression) at a time. Small records are checked in the
  // buffer and copied once; records of a quarter of it or more are read from the stream directly
  // into their destination.
  size_t buffer_size = 256 << 10;
  // Uncompressed files only (ignored otherwise): read the file ahead into four blocks of about
  // 1.25 * buffer_size (in place of the read buffer), on a helper thread owned by the reader and,
  // whenever the block it needs is not there yet, on the calling thread too, which checks the
  // records in those blocks. The kernel's copy out of the page cache, the slowest part, then runs
  // on two cores, beside the CRC checks. Costs a second core while reading.
  bool read_ahead = false;
  // A record whose length field says more is ResourceExhausted before any of it is read. Raise it
  // for files of larger records; it bounds the memory a reader can be made to use.
  uint64_t max_record_size = kDefaultMaxRecordSize;
};

class TFRecordReader {
 public:
  // Opens the file. Throws NotFound (or another Error naming the file) when it cannot be opened,
  // InvalidArgument for a zero buffer size or max_record_size.
  explicit TFRecordReader(std::string path, Compression compression = Compression::kNone);
  TFRecordReader(std::string path, const TFRecordReaderOptions& options);
  ~TFRecordReader();
  TFRecordReader(TFRecordReader&&) noexcept;
  TFRecordReader& operator=(TFRecordReader&&) noexcept;

  // The next record's payload into `record` (one copy), or false at a clean end of file.
  // Throws DataLoss, in TensorFlow's words plus "[file: <path>, record: <index>]":
  //   "corrupted record at <offset>" for a bad length CRC (offset = record start; at 0 followed by
  //   " (Is this even a TFRecord file?)"), or for a bad payload CRC (offset = record start + 12);
  //   "truncated record at <offset>" when the data ends inside a record, its header included;
  //   "inflate() failed ..." / "truncated compressed stream" for bad ZLIB/GZIP input, with the
  //   offset in the compressed file and in the uncompressed stream where it went wrong (after
  //   "truncated record at <offset>: " when it ends a record early). The records before bad
  //   compressed data are returned first.
  // Throws ResourceExhausted, with the same "[file: ..., record: ...]", for a record whose length
  // field passes its CRC but exceeds max_record_size ("record at <offset> declares <n> bytes").
  // A corrupted payload is never returned. After an error the reader stays failed: every later
  // call throws the same error.
  bool read(std::string& record);

  // As read(), but without copying when the record fits the read buffer. The view is valid until
  // the next call on this reader or its destruction.
  bool read_view(std::string_view& record);

  // Moves to `offset` in the (uncompressed) record stream, where offset() stood before record
  // `record_index` when a reader of this file read it, and counts on from there: how a saved
  // position is taken up again. Seeks in an uncompressed file; decompresses and drops the bytes
  // before `offset` in a compressed one. Nothing is checked at `offset` itself: the next read
  // checks the record as every read does. REQUIRES: nothing read yet. Throws DataLoss naming the
  // file when the stream ends before `offset`.
  void seek(uint64_t offset, int64_t record_index);

  // Byte offset, in the uncompressed record stream, of the next record to read.
  uint64_t offset() const { return offset_; }
  // Index of the next record to read (= the number of records read so far).
  int64_t record_index() const { return record_index_; }
  const std::string& path() const { return path_; }
  // The compression in use (never kAuto).
  Compression compression() const { return compression_; }

  // Reads from a byte stream (the file, or its decompression). Public only for the .cc file.
  class Source;

 private:
  // Makes at least `need` bytes available from pos_ unless the data ends first; returns how many
  // are available.
  size_t fill(size_t need);
  // Throws `error`, and keeps the reader failed: every later call throws it again.
  [[noreturn]] void fail(std::exception_ptr error);
  // fail() with DataLoss(words + where()).
  [[noreturn]] void fail(const std::string& words);
  // DataLoss "truncated record at <start>", with the source's reason when it has one.
  [[noreturn]] void fail_truncated(uint64_t start);
  // " [file: <path>, record: <index>]", the end of every error's message.
  std::string where() const;

  std::string path_;
  Compression compression_ = Compression::kNone;
  std::unique_ptr<Source> source_;
  std::vector<char> buffer_;  // capacity_ bytes plus room to align reads (see fill()).
  char* data_ = nullptr;      // buffer_'s bytes, or the block a read-ahead source lent.
  size_t capacity_ = 0;
  uint64_t max_record_size_ = kDefaultMaxRecordSize;
  size_t base_ = 0;  // Index of buffer_'s first cache-line-aligned byte.
  size_t pos_ = 0;   // Unconsumed bytes are buffer_[pos_, end_).
  size_t end_ = 0;
  uint64_t source_offset_ = 0;  // Bytes read from the source so far.
  bool source_done_ = false;
  std::string scratch_;  // Records read directly from the stream (see the options).
  uint64_t offset_ = 0;
  int64_t record_index_ = 0;
  std::exception_ptr error_;
};

}  // namespace sluice
