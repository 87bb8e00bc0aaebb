#include "sluice/formats/snapshot_format.h"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

#include "sluice/core/byte_reader.h"
#include "sluice/core/element_codec.h"
#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/formats/crc32c.h"

namespace sluice {
namespace {

constexpr char kShardMagic[8] = {'S', 'L', 'S', 'N', 'A', 'P', 'S', 'H'};
constexpr char kMetadataMagic[8] = {'S', 'L', 'S', 'N', 'A', 'P', 'M', 'D'};
constexpr uint64_t kAlign = kElementAlignment;
constexpr uint64_t kShardHeaderBytes = 64;
constexpr uint64_t kRecordHeaderBytes = 16;
// Pending records are written in blocks of about this size.
constexpr size_t kWriteBlock = 1 << 20;

uint64_t align_up(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

uint32_t compression_code(Compression c) {
  switch (c) {
    case Compression::kNone:
      return 0;
    case Compression::kZlib:
      return 1;
    case Compression::kGzip:
      return 2;
    case Compression::kAuto:
      break;
  }
  throw InvalidArgument("snapshot: compression must be none, ZLIB or GZIP");
}

std::optional<Compression> compression_of(uint32_t code) {
  switch (code) {
    case 0:
      return Compression::kNone;
    case 1:
      return Compression::kZlib;
    case 2:
      return Compression::kGzip;
    default:
      return std::nullopt;
  }
}

int window_bits(Compression c) { return c == Compression::kGzip ? 16 + MAX_WBITS : MAX_WBITS; }

// Appends `raw` deflated with the wrapper of `c`.
void deflate_into(std::string& out, std::string_view raw, Compression c, const std::string& path) {
  z_stream stream = {};
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits(c), 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    throw ResourceExhausted(str_cat("deflateInit2 failed for '", path, "'"));
  }
  const size_t start = out.size();
  out.resize(start + deflateBound(&stream, static_cast<uLong>(raw.size())) + 64);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  stream.avail_in = static_cast<uInt>(raw.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data() + start);
  stream.avail_out = static_cast<uInt>(out.size() - start);
  const int rc = deflate(&stream, Z_FINISH);
  const size_t written = stream.total_out;
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) {
    throw Internal(str_cat("deflate failed with error ", rc, " for '", path, "'"));
  }
  out.resize(start + written);
}

void check_component(const ComponentSpec& spec, std::string_view name, const Tensor& t,
                     const auto& fail) {
  if (name != spec.name)
    fail(str_cat("component '", name, "' where the spec has '", spec.name, "'"));
  if (t.dtype() != spec.dtype || static_cast<size_t>(t.rank()) != spec.dims.size()) {
    fail(str_cat("component '", name, "' is ", dtype_name(t.dtype()), t.shape().to_string(),
                 " where the spec has ", element_spec_string({spec})));
  }
  for (int i = 0; i < t.rank(); ++i) {
    const int64_t d = spec.dims[static_cast<size_t>(i)];
    if (d >= 0 && d != t.dim(i)) {
      fail(str_cat("component '", name, "' has shape ", t.shape().to_string(),
                   " where the spec has ", element_spec_string({spec})));
    }
  }
}

}  // namespace

std::string element_spec_string(const ElementSpec& spec) {
  std::string out;
  for (const ComponentSpec& c : spec) {
    if (!out.empty()) out += ", ";
    out += str_cat(c.name.empty() ? "" : c.name + ": ", dtype_name(c.dtype), "[");
    for (size_t i = 0; i < c.dims.size(); ++i) {
      out +=
          str_cat(i == 0 ? "" : ", ", c.dims[i] < 0 ? std::string("?") : std::to_string(c.dims[i]));
    }
    out += "]";
  }
  return out;
}

uint64_t SnapshotMetadata::elements() const {
  uint64_t n = 0;
  for (const SnapshotShard& s : shards) n += s.elements;
  return n;
}

std::string snapshot_shard_path(const std::string& folder, int64_t index) {
  char name[48];
  std::snprintf(name, sizeof(name), "shard-%05lld.snapshot", static_cast<long long>(index));
  return folder + "/" + name;
}

// --- Metadata ---------------------------------------------------------------------------------

namespace {

std::string encode_metadata(const SnapshotMetadata& m) {
  std::string payload;
  put_bytes<uint64_t>(payload, m.fingerprint);
  put_bytes<uint32_t>(payload, compression_code(m.compression));
  put_bytes<uint32_t>(payload, static_cast<uint32_t>(m.spec.size()));
  for (const ComponentSpec& c : m.spec) {
    put_bytes<uint8_t>(payload, static_cast<uint8_t>(c.dtype));
    put_bytes<uint8_t>(payload, static_cast<uint8_t>(c.dims.size()));
    put_bytes<uint16_t>(payload, static_cast<uint16_t>(c.name.size()));
    payload += c.name;
    for (int64_t d : c.dims) put_bytes<int64_t>(payload, d);
  }
  put_bytes<uint32_t>(payload, static_cast<uint32_t>(m.shards.size()));
  for (const SnapshotShard& s : m.shards) {
    put_bytes<int64_t>(payload, s.index);
    put_bytes<uint64_t>(payload, s.elements);
    put_bytes<uint64_t>(payload, s.bytes);
  }
  std::string out(kMetadataMagic, sizeof(kMetadataMagic));
  put_bytes<uint32_t>(out, kSnapshotVersion);
  put_bytes<uint64_t>(out, payload.size());
  put_bytes<uint32_t>(out, masked_crc32c(payload));
  return out + payload;
}

}  // namespace

SnapshotMetadata read_snapshot_metadata(const std::string& folder) {
  const std::string path = folder + "/" + kSnapshotMetadataName;
  std::string bytes;
  try {
    bytes = read_whole_file(path);
  } catch (const NotFound& e) {
    throw NotFound(str_cat("no snapshot in '", folder, "': ", e.what()));
  }
  StringByteReader header(bytes, str_cat("snapshot metadata '", path, "'"));
  char magic[sizeof(kMetadataMagic)];
  header.read(magic, sizeof(magic));
  if (std::memcmp(magic, kMetadataMagic, sizeof(magic)) != 0) header.fail_at(0, "bad magic");
  const auto version = header.get<uint32_t>();
  if (version > kSnapshotVersion) {
    throw InvalidArgument(str_cat("snapshot metadata '", path, "' is of version ", version,
                                  "; this build reads up to ", kSnapshotVersion));
  }
  const uint64_t length_at = header.offset();
  const auto length = header.get<uint64_t>();
  const auto crc = header.get<uint32_t>();
  if (length != header.remaining()) {
    header.fail_at(length_at, str_cat("a payload of ", length, " bytes where ", header.remaining(),
                                      " follow (truncated)"));
  }
  const std::string_view payload = std::string_view(bytes).substr(header.offset());
  if (unmask_crc32c(crc) != crc32c(payload)) header.fail("payload checksum mismatch");
  StringByteReader in(payload, str_cat("snapshot metadata '", path, "'"), header.offset());
  SnapshotMetadata m;
  m.fingerprint = in.get<uint64_t>();
  const auto compression = compression_of(in.get<uint32_t>());
  if (!compression) in.fail("unknown compression");
  m.compression = *compression;
  const auto components = in.get<uint32_t>();
  if (components > in.remaining() / 4) in.fail("too many components");
  for (uint32_t i = 0; i < components; ++i) {
    ComponentSpec c;
    const auto dtype = in.get<uint8_t>();
    const auto rank = in.get<uint8_t>();
    if (dtype > static_cast<uint8_t>(DType::kString)) in.fail(str_cat("bad dtype ", +dtype));
    if (rank > Shape::kMaxRank) in.fail(str_cat("bad rank ", +rank));
    c.dtype = static_cast<DType>(dtype);
    c.name.assign(in.get<uint16_t>(), '\0');
    in.read(c.name.data(), c.name.size());
    c.dims.resize(rank);
    for (int64_t& d : c.dims) {
      d = in.get<int64_t>();
      if (d < -1) in.fail(str_cat("bad dimension ", d));
    }
    m.spec.push_back(std::move(c));
  }
  const auto shards = in.get<uint32_t>();
  if (shards > in.remaining() / 24) in.fail("too many shards");
  for (uint32_t i = 0; i < shards; ++i) {
    SnapshotShard s;
    s.index = in.get<int64_t>();
    s.elements = in.get<uint64_t>();
    s.bytes = in.get<uint64_t>();
    if (s.index < 0 || (!m.shards.empty() && s.index <= m.shards.back().index)) {
      in.fail(str_cat("shard index ", s.index, " out of order"));
    }
    m.shards.push_back(s);
  }
  if (!in.at_end()) in.fail("bytes after the shard list");
  return m;
}

// --- Writer -----------------------------------------------------------------------------------

struct SnapshotWriter::Shard {
  int64_t index = 0;
  uint64_t elements = 0;
  uint64_t written = 0;  // Bytes in the file; pending_ starts there (a multiple of 64).
  std::optional<WritableFile> file;
  std::string pending;

  void flush() {
    file->append(pending);
    written += pending.size();
    pending.clear();
  }
};

SnapshotWriter::SnapshotWriter(std::string folder, Compression compression)
    : folder_(std::move(folder)), compression_(compression) {
  compression_code(compression_);
}

SnapshotWriter::~SnapshotWriter() = default;

SnapshotWriter::Shard& SnapshotWriter::shard(int64_t index) {
  auto it = std::lower_bound(shards_.begin(), shards_.end(), index,
                             [](const auto& s, int64_t i) { return s->index < i; });
  if (it != shards_.end() && (*it)->index == index) return **it;
  auto s = std::make_unique<Shard>();
  s->index = index;
  s->file.emplace(WritableFile::create(snapshot_shard_path(folder_, index)));
  s->pending.assign(kShardMagic, sizeof(kShardMagic));
  put_bytes<uint32_t>(s->pending, kSnapshotVersion);
  put_bytes<uint32_t>(s->pending, compression_code(compression_));
  s->pending.resize(kShardHeaderBytes, '\0');
  return **shards_.insert(it, std::move(s));
}

void SnapshotWriter::write(const Element& element, int64_t shard_index, int64_t index) {
  if (!have_spec_) {
    for (size_t c = 0; c < element.size(); ++c) {
      const auto dims = element[c].shape().dims();
      spec_.push_back({std::string(element.name(c)), element[c].dtype(),
                       std::vector<int64_t>(dims.begin(), dims.end())});
    }
    have_spec_ = true;
  } else {
    const auto fail = [&](const std::string& problem) {
      throw InvalidArgument(str_cat("snapshot: element ", index,
                                    " does not match the elements "
                                    "before it (",
                                    element_spec_string(spec_), "): ", problem));
    };
    if (element.size() != spec_.size()) {
      fail(str_cat("it has ", element.size(), " components"));
    }
    for (size_t c = 0; c < element.size(); ++c) {
      ComponentSpec& spec = spec_[c];
      const Tensor& t = element[c];
      // Dimensions that differ are relaxed before the check, which then judges the rest.
      if (static_cast<size_t>(t.rank()) == spec.dims.size()) {
        for (int i = 0; i < t.rank(); ++i) {
          if (spec.dims[static_cast<size_t>(i)] != t.dim(i)) spec.dims[static_cast<size_t>(i)] = -1;
        }
      }
      check_component(spec, element.name(c), t, fail);
    }
  }
  Shard& s = shard(shard_index);
  std::string& out = s.pending;
  const size_t start = out.size();
  out.append(kRecordHeaderBytes, '\0');
  if (compression_ == Compression::kNone) {
    // out[0] lies at a multiple of 64 in the file, the payloads' origin.
    append_element_aligned(out, element, 0);
  } else {
    scratch_.clear();
    append_element_aligned(scratch_, element, kRecordHeaderBytes);
    put_bytes<uint64_t>(out, scratch_.size());
    deflate_into(out, scratch_, compression_, s.file->path());
  }
  const uint64_t length = out.size() - start - kRecordHeaderBytes;
  char header[kRecordHeaderBytes];
  std::memcpy(header, &length, 8);
  const uint32_t length_crc = masked_crc32c(header, 8);
  const uint32_t body_crc = masked_crc32c(out.data() + start + kRecordHeaderBytes, length);
  std::memcpy(header + 8, &length_crc, 4);
  std::memcpy(header + 12, &body_crc, 4);
  std::memcpy(out.data() + start, header, sizeof(header));
  out.resize(align_up(out.size()), '\0');
  ++s.elements;
  if (out.size() >= kWriteBlock) s.flush();
}

void SnapshotWriter::finish(uint64_t fingerprint) {
  SnapshotMetadata m;
  m.fingerprint = fingerprint;
  m.compression = compression_;
  m.spec = spec_;
  for (auto& s : shards_) {
    s->flush();
    s->file->close();
    m.shards.push_back({s->index, s->elements, s->written});
  }
  WritableFile metadata = WritableFile::create(folder_ + "/" + kSnapshotMetadataName);
  metadata.append(encode_metadata(m));
  metadata.close();
}

// --- Reader -----------------------------------------------------------------------------------

// The records of one shard file that this process has checked, by element index. A file whose
// identity is unchanged holds the bytes it held then, so checking them again each pass would only
// cost time: for a batch of float32 images, many times what serving it costs.
class CheckedRecords {
 public:
  explicit CheckedRecords(uint64_t records) : words_(static_cast<size_t>((records + 63) / 64)) {}

  bool contains(uint64_t record) const {
    return record / 64 < words_.size() &&
           ((words_[record / 64].load(std::memory_order_acquire) >> (record % 64)) & 1) != 0;
  }
  void add(uint64_t record) {
    if (record / 64 < words_.size()) {
      words_[record / 64].fetch_or(uint64_t{1} << (record % 64), std::memory_order_release);
    }
  }

 private:
  std::vector<std::atomic<uint64_t>> words_;
};

namespace {

// A file last changed at least this long before it was mapped cannot change again unseen: file
// timestamps move in clock ticks of milliseconds, and a network file system's clock may lag.
constexpr int64_t kSettledNs = 1'000'000'000;
// Files remembered at most; past that the memory starts over (a long process that writes
// snapshot after snapshot).
constexpr size_t kMaxRememberedFiles = 4096;

// The checked records of `file` (a shard of `records` records) shared by every reader of it in
// this process, or null for a file that changed too recently to be told apart from a later
// change.
std::shared_ptr<CheckedRecords> checked_records(const MappedFile& file, uint64_t records) {
  if (!file.unchanged_for(kSettledNs)) return nullptr;
  static std::mutex mutex;
  static std::map<FileIdentity, std::shared_ptr<CheckedRecords>> files;
  std::lock_guard lock(mutex);
  auto [it, added] = files.try_emplace(file.identity());
  if (added) {
    if (files.size() > kMaxRememberedFiles) {
      files.clear();
      it = files.try_emplace(file.identity()).first;
    }
    it->second = std::make_shared<CheckedRecords>(records);
  }
  return it->second;
}

}  // namespace

SnapshotReader::SnapshotReader(std::string folder)
    : SnapshotReader(folder, read_snapshot_metadata(folder)) {}

SnapshotReader::SnapshotReader(std::string folder, SnapshotMetadata metadata)
    : folder_(std::move(folder)), metadata_(std::move(metadata)), offset_(kShardHeaderBytes) {}

SnapshotPosition SnapshotReader::position() const { return {shard_, element_, offset_}; }

void SnapshotReader::seek(const SnapshotPosition& p) {
  const bool end = p.shard == metadata_.shards.size() && p.element == 0;
  if (!end && (p.shard >= metadata_.shards.size() ||
               p.element > metadata_.shards[p.shard].elements || p.offset % kAlign != 0 ||
               p.offset < kShardHeaderBytes || p.offset > metadata_.shards[p.shard].bytes)) {
    throw FailedPrecondition(str_cat("snapshot '", folder_, "': no element ", p.element,
                                     " at byte offset ", p.offset, " in shard ", p.shard,
                                     ": the snapshot is not the one the position was saved in"));
  }
  if (p.shard != shard_) {
    file_.reset();
  } else if (p.element != element_) {
    checked_.reset();  // As open_shard() says.
  }
  shard_ = p.shard;
  element_ = p.element;
  offset_ = end ? kShardHeaderBytes : p.offset;
}

void SnapshotReader::open_shard() {
  const SnapshotShard& meta = metadata_.shards[shard_];
  auto file = std::make_shared<const MappedFile>(snapshot_shard_path(folder_, meta.index));
  const std::string& path = file->path();
  if (file->size() != meta.bytes) {
    throw DataLoss(str_cat(
        "snapshot shard '", path, "': ", file->size(), " bytes where the metadata says ",
        meta.bytes, " (truncated or changed) at byte offset ", std::min(file->size(), meta.bytes)));
  }
  StringByteReader in(file->bytes(), str_cat("snapshot shard '", path, "'"));
  char magic[sizeof(kShardMagic)];
  in.read(magic, sizeof(magic));
  if (std::memcmp(magic, kShardMagic, sizeof(magic)) != 0) in.fail_at(0, "bad magic");
  const auto version = in.get<uint32_t>();
  if (version > kSnapshotVersion) in.fail_at(8, str_cat("version ", version, " is unknown"));
  const auto compression = compression_of(in.get<uint32_t>());
  if (compression != metadata_.compression) {
    in.fail_at(12, "a compression other than the metadata's");
  }
  // Records are remembered by their index, which a reader knows for certain only walking a shard
  // from its start.
  checked_ = element_ == 0 ? checked_records(*file, meta.elements) : nullptr;
  file_ = std::move(file);
}

std::optional<Element> SnapshotReader::next() {
  while (shard_ < metadata_.shards.size()) {
    const SnapshotShard& meta = metadata_.shards[shard_];
    if (element_ == meta.elements) {
      if (file_ && offset_ != file_->size()) {
        throw DataLoss(str_cat("snapshot shard '", file_->path(), "': bytes after its ",
                               meta.elements, " elements at byte offset ", offset_));
      }
      ++shard_;
      element_ = 0;
      offset_ = kShardHeaderBytes;
      file_.reset();
      checked_.reset();
      continue;
    }
    if (!file_) open_shard();
    const std::string what = str_cat("snapshot shard '", file_->path(), "'");
    const uint64_t at = offset_;
    StringByteReader in(file_->bytes().substr(static_cast<size_t>(at)), what, at);
    const auto length = in.get<uint64_t>();
    const auto length_crc = in.get<uint32_t>();
    const auto body_crc = in.get<uint32_t>();
    if (unmask_crc32c(length_crc) != crc32c(&length, sizeof(length))) {
      in.fail_at(at, "record length checksum mismatch");
    }
    if (length > in.remaining()) {
      in.fail_at(at, str_cat("a record of ", length, " bytes passes the end (truncated)"));
    }
    const std::string_view body = in.take(static_cast<size_t>(length));
    const bool checked = checked_ && checked_->contains(element_);
    if (!checked && unmask_crc32c(body_crc) != (checksum_ ? checksum_(body) : crc32c(body))) {
      in.fail_at(at, "record checksum mismatch");
    }
    Element element;
    if (metadata_.compression == Compression::kNone) {
      StringByteReader record(body, what, at + kRecordHeaderBytes);
      element = read_element_aligned(record, file_);
      if (!record.at_end()) record.fail("bytes after the element");
    } else {
      StringByteReader framing(body, what, at + kRecordHeaderBytes);
      const auto raw = framing.get<uint64_t>();
      const std::string_view deflated = body.substr(8);
      // Inflated as the record would lie in the file: the body 16 bytes past an aligned start.
      if (raw > std::numeric_limits<uint32_t>::max() ||
          raw > static_cast<uint64_t>(deflated.size()) * 1032 + 64) {
        framing.fail_at(at, str_cat("an inflated size of ", raw, " bytes is impossible"));
      }
      auto buffer = std::make_shared<Tensor>(Tensor::uninitialized(
          DType::kUInt8, Shape{static_cast<int64_t>(kRecordHeaderBytes + raw)}));
      char* inflated = reinterpret_cast<char*>(buffer->data<uint8_t>()) + kRecordHeaderBytes;
      z_stream stream = {};
      if (inflateInit2(&stream, window_bits(metadata_.compression)) != Z_OK) {
        throw ResourceExhausted(str_cat("inflateInit2 failed for '", file_->path(), "'"));
      }
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(deflated.data()));
      stream.avail_in = static_cast<uInt>(deflated.size());
      stream.next_out = reinterpret_cast<Bytef*>(inflated);
      stream.avail_out = static_cast<uInt>(raw);
      const int rc = inflate(&stream, Z_FINISH);
      const uint64_t out = stream.total_out;
      inflateEnd(&stream);
      if (rc != Z_STREAM_END || out != raw) {
        framing.fail_at(at, "a compressed record that does not inflate");
      }
      StringByteReader record(std::string_view(inflated, static_cast<size_t>(raw)),
                              str_cat(what, " (record at byte offset ", at, ", inflated)"),
                              kRecordHeaderBytes);
      element = read_element_aligned(record, buffer);
      if (!record.at_end()) record.fail("bytes after the element");
    }
    const auto fail = [&](const std::string& problem) {
      throw DataLoss(str_cat(what, ": an element that does not match the metadata's spec (",
                             problem, ") at byte offset ", at));
    };
    if (element.size() != metadata_.spec.size()) {
      fail(str_cat(element.size(), " components where the spec has ", metadata_.spec.size()));
    }
    for (size_t c = 0; c < element.size(); ++c) {
      check_component(metadata_.spec[c], element.name(c), element[c], fail);
    }
    if (checked_ && !checked) checked_->add(element_);
    offset_ = std::min<uint64_t>(align_up(in.offset()), file_->size());
    ++element_;
    return element;
  }
  return std::nullopt;
}

}  // namespace sluice
