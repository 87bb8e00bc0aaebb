#include "sluice/formats/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/core/file_system.h"
#include "sluice/core/strings.h"

namespace sluice {
namespace {

struct FreeBytes {
  void operator()(uint8_t* bytes) const { std::free(bytes); }
};

// The bytes of an IDX file, raw or gzip-compressed (one or more gzip members, as gzip writes
// them), read through the file seam.
class IdxInput {
 public:
  explicit IdxInput(const std::string& path) : path_(path), file_(path), input_(256 << 10) {
    fill();
    gzip_ = available_ >= 2 && static_cast<unsigned char>(input_[0]) == 0x1f &&
            static_cast<unsigned char>(input_[1]) == 0x8b;
    if (gzip_ && inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) {
      throw ResourceExhausted(str_cat("IDX file ", path, ": cannot start decompressing"));
    }
  }
  ~IdxInput() {
    if (gzip_) inflateEnd(&stream_);
  }
  IdxInput(const IdxInput&) = delete;
  IdxInput& operator=(const IdxInput&) = delete;

  // Reads up to `n` bytes; fewer only at the end of the data.
  size_t read(void* out, size_t n) {
    char* dst = static_cast<char*>(out);
    size_t done = 0;
    while (done < n && !finished_) {
      if (next_ == available_ && !fill()) break;
      if (!gzip_) {
        const size_t k = std::min(n - done, available_ - next_);
        std::memcpy(dst + done, input_.data() + next_, k);
        next_ += k;
        done += k;
        continue;
      }
      stream_.next_in = reinterpret_cast<Bytef*>(input_.data() + next_);
      stream_.avail_in = static_cast<uInt>(available_ - next_);
      stream_.next_out = reinterpret_cast<Bytef*>(dst + done);
      stream_.avail_out = static_cast<uInt>(std::min<size_t>(n - done, 1u << 30));
      const uInt wanted = stream_.avail_out;
      const int rc = inflate(&stream_, Z_NO_FLUSH);
      next_ = available_ - stream_.avail_in;
      done += wanted - stream_.avail_out;
      if (rc == Z_STREAM_END) {
        // Another gzip member may follow; anything else after one ends the data, as gzread has it.
        if (next_ == available_) fill();
        finished_ = available_ - next_ < 2 || static_cast<unsigned char>(input_[next_]) != 0x1f ||
                    static_cast<unsigned char>(input_[next_ + 1]) != 0x8b;
        inflateReset(&stream_);
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        throw DataLoss(str_cat("IDX file ", path_, ": corrupt gzip data at offset ", offset_ + done,
                               ": ", stream_.msg ? stream_.msg : "inflate failed"));
      }
    }
    offset_ += done;
    return done;
  }

  void read_exactly(void* out, size_t n, const char* what) {
    const uint64_t start = offset_;
    if (read(out, n) != n) {
      throw DataLoss(str_cat("IDX file ", path_, ": truncated at offset ", offset_, " (", what,
                             " needs ", n, " bytes from offset ", start, ")"));
    }
  }

  uint64_t offset() const { return offset_; }
  const std::string& path() const { return path_; }

 private:
  // Refills the input buffer once it is used up; false at the end of the file.
  bool fill() {
    available_ = file_.read(input_.data(), input_.size());
    next_ = 0;
    return available_ > 0;
  }

  std::string path_;
  SequentialFile file_;
  std::vector<char> input_;
  size_t next_ = 0, available_ = 0;
  bool gzip_ = false;
  bool finished_ = false;  // The last gzip member has ended.
  z_stream stream_{};
  uint64_t offset_ = 0;
};

uint32_t big_endian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

Tensor read_idx(const std::string& path, uint32_t expected_magic, uint64_t max_bytes) {
  const int rank = static_cast<int>(expected_magic & 0xFF);
  if ((expected_magic & 0xFFFFFF00u) != 0x00000800u || rank < 1 || rank > 4) {
    throw InvalidArgument(str_cat("read_idx: unsupported expected magic 0x", std::hex,
                                  expected_magic, " (only unsigned-byte data of rank 1..4)"));
  }
  IdxInput in(path);
  unsigned char header[4];
  in.read_exactly(header, 4, "the magic number");
  const uint32_t magic = big_endian32(header);
  if (magic != expected_magic) {
    char text[96];
    std::snprintf(text, sizeof(text), "bad magic 0x%08x at offset 0, expected 0x%08x", magic,
                  expected_magic);
    throw InvalidArgument(str_cat("IDX file ", path, ": ", text,
                                  expected_magic == kIdxImagesMagic   ? " (an images file)"
                                  : expected_magic == kIdxLabelsMagic ? " (a labels file)"
                                                                      : ""));
  }

  std::vector<int64_t> dims(static_cast<size_t>(rank));
  uint64_t bytes = 1;
  for (int i = 0; i < rank; ++i) {
    const uint64_t at = in.offset();
    in.read_exactly(header, 4, "a dimension");
    const uint32_t dim = big_endian32(header);
    if (dim == 0) {
      throw InvalidArgument(str_cat("IDX file ", path, ": dimension ", i, " is 0 at offset ", at));
    }
    dims[static_cast<size_t>(i)] = dim;
    // Each factor is below 2^32, so checking against max_bytes (< 2^63) keeps this exact.
    bytes *= dim;
    if (bytes > max_bytes) {
      throw ResourceExhausted(str_cat("IDX file ", path, ": dimensions up to offset ", in.offset(),
                                      " promise more than ", max_bytes, " bytes"));
    }
  }

  // Grow with the data actually read, so a lying header cannot make us allocate gigabytes. By
  // realloc, which moves the pages of a large block rather than copying them, into memory left
  // unzeroed for the data to fill: the bytes are written once.
  std::unique_ptr<uint8_t, FreeBytes> data;
  size_t size = 0;
  constexpr size_t kStep = 16 << 20;
  while (size < bytes) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(bytes - size, kStep));
    auto* grown = static_cast<uint8_t*>(std::realloc(data.get(), size + want));
    if (grown == nullptr) throw std::bad_alloc();
    data.release();  // realloc moved or kept it: `grown` owns it now.
    data.reset(grown);
    const size_t got = in.read(data.get() + size, want);
    size += want;
    if (got != want) {
      throw DataLoss(str_cat("IDX file ", path, ": truncated at offset ", in.offset(),
                             ": the header promises ", bytes, " bytes of data from offset ",
                             4 + 4 * rank));
    }
  }
  unsigned char extra;
  if (in.read(&extra, 1) != 0) {
    throw DataLoss(str_cat("IDX file ", path, ": unexpected data at offset ", in.offset() - 1,
                           " after the ", bytes, " bytes the dimensions promise"));
  }
  uint8_t* raw = data.release();
  return Tensor::from_external(DType::kUInt8, Shape(dims), raw, [raw] { std::free(raw); });
}

}  // namespace sluice
