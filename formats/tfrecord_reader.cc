#include "sluice/formats/tfrecord_reader.h"

#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>

#include "sluice/core/errors.h"
#include "sluice/core/file_system.h"
#include "sluice/core/strings.h"
#include "sluice/formats/crc32c.h"
#include "sluice/formats/input_stream.h"

namespace sluice {
namespace {

constexpr size_t kHeaderSize = 12;  // uint64 length + uint32 masked CRC of the length.
constexpr size_t kFooterSize = 4;   // uint32 masked CRC of the payload.
constexpr size_t kAlign = 64;       // Cache line.
// Large records grow their destination in steps of this size so that a length field that passes
// its CRC but promises more data than there is cannot make us allocate it up front: memory follows
// the bytes that arrive.
constexpr size_t kLargeRecordStep = 4 << 20;

uint64_t load_u64_le(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;  // Little-endian hosts only, as the rest of sluice.
}
uint32_t load_u32_le(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

// The record stream: reads up to n bytes, fewer only at its end; throws DataLoss when the bytes
// cannot be produced.
class TFRecordReader::Source {
 public:
  virtual ~Source() = default;
  virtual size_t read(char* dst, size_t n) = 0;
  // Called once read() has ended (at a record boundary, or inside a record): throws if the stream
  // did not end well.
  virtual void check_end() {}
  // Moves n bytes on before anything was read, fewer only at the end; returns how many.
  virtual uint64_t skip(uint64_t n) {
    std::vector<char> sink(std::min<uint64_t>(n, 1 << 20));
    uint64_t done = 0;
    while (done < n) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(n - done, sink.size()));
      const size_t got = read(sink.data(), want);
      done += got;
      if (got < want) break;
    }
    return done;
  }

  // Sources that lend their own buffers (reserve() > 0): the next bytes of the stream, at
  // data[begin, end), with reserve() writable bytes before `begin`; data == nullptr at the end.
  // The view stays valid until the next call after this one.
  struct BlockView {
    char* data = nullptr;
    size_t begin = 0;
    size_t end = 0;
  };
  virtual size_t reserve() const { return 0; }
  virtual BlockView next_block() { return {}; }
};

namespace {

// The file read ahead into a ring of kBlocks blocks, each with room in front for the reader to
// put the unconsumed end of the previous block (see TFRecordReader::fill()). Block i of the file,
// bytes [i * block_size, (i + 1) * block_size), goes to slot i % kBlocks. A helper thread reads the
// blocks in order. The reader, when the block it needs is not there yet, reads the next unclaimed
// block itself where the ring has room for it: copying out of the page cache is slower than the
// CRC checks, so both threads copy. The reader checks records in the blocks themselves: the only
// copy is the kernel's. It holds at most two blocks: the one lent to it and, while it copies that
// block's tail, the next.
class ReadAheadSource final : public TFRecordReader::Source {
 public:
  ReadAheadSource(const std::string& path, size_t block_size)
      : file_(path),
        block_size_(block_size),
        // The reader's tail is shorter than a record it checks in place: < block_size / 4 + 16.
        reserve_((block_size / 4 + kHeaderSize + kFooterSize + 2 * kAlign) / kAlign * kAlign) {
    for (Block& b : blocks_) b.data.resize(reserve_ + block_size);
    helper_ = std::thread([this] { run(); });
  }
  ~ReadAheadSource() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true, std::memory_order_release);
    }
    cv_.notify_all();
    helper_.join();
  }

  size_t reserve() const override { return reserve_; }

  BlockView next_block() override {
    if (pos_ < size_) {  // What read() left of the newest held block.
      const BlockView v{newest().data.data(), reserve_ + pos_, reserve_ + size_};
      pos_ = size_;
      return v;
    }
    // The reader may still copy from the block it has: keep it until the next call.
    if (!acquire(/*keep=*/1)) return {};
    pos_ = size_;
    return {newest().data.data(), reserve_, reserve_ + size_};
  }

  // Called by the reader only once it has consumed every byte it was lent.
  size_t read(char* dst, size_t n) override {
    size_t done = 0;
    while (done < n) {
      if (pos_ == size_ && !acquire(/*keep=*/0)) break;
      const size_t k = std::min(n - done, size_ - pos_);
      std::memcpy(dst + done, newest().data.data() + reserve_ + pos_, k);
      pos_ += k;
      done += k;
    }
    return done;
  }

 private:
  static constexpr size_t kBlocks = 4;
  static constexpr uint64_t kNoEnd = std::numeric_limits<uint64_t>::max();
  struct Block {
    std::vector<char> data;
    // Set by the thread that read the block, before it publishes it through `filled`.
    size_t size = 0;  // Bytes at data[reserve_, reserve_ + size).
    std::exception_ptr error;
    std::atomic<uint64_t> filled{0};  // 1 + the index of the file's block it holds, once read.
  };

  Block& slot(uint64_t block) { return blocks_[block % kBlocks]; }
  Block& newest() { return slot(taken_ - 1); }

  // Returns once `ready()` or after kSpin. A block is ready every few tens of microseconds, sooner
  // than a thread asleep on the condition variable wakes (a futex round trip, which costs most in
  // a VM), and a reader that reads ahead owns the second core meanwhile.
  template <typename Ready>
  static void spin_until(const Ready& ready) {
    constexpr auto kSpin = std::chrono::microseconds(100);
    const auto deadline = std::chrono::steady_clock::now() + kSpin;
    for (uint32_t i = 1; !ready(); ++i) {
      if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) return;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
  }

  // Waits for `ready()`: spins, then sleeps on cv_ (whatever changes it is changed under mu_).
  template <typename Ready>
  void wait_until(const Ready& ready) {
    spin_until(ready);
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, ready);
  }

  // Whether every block up to the file's end has been claimed.
  bool all_claimed() const {
    return next_.load(std::memory_order_acquire) > end_.load(std::memory_order_acquire);
  }
  // Whether `block` is in the file as far as known, and its slot is free.
  bool claimable(uint64_t block) const {
    return block <= end_.load(std::memory_order_acquire) &&
           block - consumed_.load(std::memory_order_acquire) < kBlocks;
  }

  // The next block nobody reads yet, if claimable.
  std::optional<uint64_t> claim() {
    uint64_t next = next_.load(std::memory_order_acquire);
    while (claimable(next)) {
      if (next_.compare_exchange_weak(next, next + 1, std::memory_order_acq_rel)) return next;
    }
    return std::nullopt;
  }

  // Reads `block` into its slot and hands it over. A short or failed read is the file's last.
  void fill(uint64_t block) {
    Block& b = slot(block);
    b.size = 0;
    b.error = nullptr;
    try {
      b.size = file_.read_at(block * block_size_, b.data.data() + reserve_, block_size_);
    } catch (...) {
      b.error = std::current_exception();
    }
    if (b.error || b.size < block_size_) {
      uint64_t end = end_.load(std::memory_order_acquire);
      while (block < end && !end_.compare_exchange_weak(end, block, std::memory_order_acq_rel)) {
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      b.filled.store(block + 1, std::memory_order_release);
    }
    cv_.notify_all();
  }

  // Gives back all held blocks but the `keep` newest, then takes the next one; false at the end
  // of the file. Rethrows a read error once the blocks before it are taken.
  bool acquire(uint64_t keep) {
    if (taken_ - consumed_.load(std::memory_order_relaxed) > keep) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        consumed_.store(taken_ - keep, std::memory_order_release);
      }
      cv_.notify_all();
    }
    const uint64_t block = taken_;
    Block& b = slot(block);
    auto ready = [&] {
      return b.filled.load(std::memory_order_acquire) == block + 1 ||
             block > end_.load(std::memory_order_acquire);
    };
    while (!ready()) {
      if (const std::optional<uint64_t> other = claim()) {
        fill(*other);
      } else {
        // Only giving back blocks, which this thread does, makes more claimable.
        wait_until(ready);
      }
    }
    if (block > end_.load(std::memory_order_acquire)) return false;
    ++taken_;
    size_ = 0;
    pos_ = 0;
    if (b.error) std::rethrow_exception(b.error);
    size_ = b.size;
    return size_ > 0;
  }

  void run() {
    // Named, as the feeders are, so that a debugger or a thread count can tell it apart.
    pthread_setname_np(pthread_self(), "sluice-readahead");
    while (!stop_.load(std::memory_order_acquire)) {
      if (const std::optional<uint64_t> block = claim()) {
        fill(*block);
      } else if (all_claimed()) {
        return;
      } else {
        wait_until([&] {
          return stop_.load(std::memory_order_acquire) || all_claimed() ||
                 claimable(next_.load(std::memory_order_acquire));
        });
      }
    }
  }

  SequentialFile file_;
  const size_t block_size_;
  const size_t reserve_;
  std::array<Block, kBlocks> blocks_;
  // The reader's side: blocks [consumed_, taken_) are held, and bytes [pos_, size_) of the newest
  // are not yet handed out.
  uint64_t taken_ = 0;
  size_t size_ = 0;
  size_t pos_ = 0;
  // Shared: read without mu_ while spinning, changed under it where a sleeper waits on the change
  // (consumed_, filled, stop_), so that none misses it.
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<uint64_t> consumed_{0};
  std::atomic<uint64_t> next_{0};      // The next block to claim.
  std::atomic<uint64_t> end_{kNoEnd};  // The file's last block, once a read came back short.
  std::atomic<bool> stop_{false};
  std::thread helper_;  // Last: started once everything above exists.
};

// The file's bytes as stored or inflated (formats/input_stream.h). A compressed stream that is
// corrupt or cut ends the bytes there, the good ones handed out first, so the records they hold
// are read; check_end() then reports why.
class StreamSource final : public TFRecordReader::Source {
 public:
  StreamSource(const std::string& path, Compression compression, size_t buffer_size)
      : stream_(path, compression, buffer_size) {}

  size_t read(char* dst, size_t n) override {
    if (error_) return 0;
    try {
      return stream_.read(dst, n);
    } catch (const DataLoss& e) {
      // The stream's message starts with the file, which the reader's own messages name at
      // their end ("[file: ..., record: ...]"): keep the words, once.
      std::string_view words = e.what();
      const std::string named = stream_.path() + ": ";
      if (words.substr(0, named.size()) == named) words.remove_prefix(named.size());
      error_ = std::make_exception_ptr(DataLoss(std::string(words)));
      return 0;
    }
  }
  // A seek in a stored file; a compressed one is inflated through read(), whose errors wait for
  // check_end().
  uint64_t skip(uint64_t n) override {
    return stream_.compression() == Compression::kNone ? stream_.skip(n)
                                                       : TFRecordReader::Source::skip(n);
  }
  // The stream hands out the good bytes before bad data, and the error with the next call.
  void check_end() override {
    char probe;
    if (!error_) read(&probe, 1);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  InputStream stream_;
  std::exception_ptr error_;
};

}  // namespace

TFRecordReader::TFRecordReader(std::string path, Compression compression)
    : TFRecordReader(std::move(path), TFRecordReaderOptions{.compression = compression}) {}

TFRecordReader::TFRecordReader(std::string path, const TFRecordReaderOptions& options)
    : path_(std::move(path)), compression_(options.compression) {
  if (options.buffer_size == 0) {
    throw InvalidArgument(
        str_cat("TFRecordReader: buffer_size must be positive for '", path_, "'"));
  }
  if (options.max_record_size == 0) {
    throw InvalidArgument(
        str_cat("TFRecordReader: max_record_size must be positive for '", path_, "'"));
  }
  max_record_size_ = options.max_record_size;
  if (compression_ == Compression::kAuto) compression_ = detect_compression(path_);
  // At least a header and a footer fit, so small buffers still work.
  capacity_ = std::max(options.buffer_size, kHeaderSize + kFooterSize);
  if (compression_ == Compression::kNone && options.read_ahead) {
    source_ = std::make_unique<ReadAheadSource>(path_, capacity_);
  } else {
    source_ = std::make_unique<StreamSource>(path_, compression_, options.buffer_size);
  }
  if (source_->reserve() == 0) {
    buffer_.resize(capacity_ + 2 * kAlign);
    data_ = buffer_.data();
    base_ = (kAlign - reinterpret_cast<uintptr_t>(buffer_.data()) % kAlign) % kAlign;
    pos_ = end_ = base_;
  }
}

TFRecordReader::~TFRecordReader() = default;
TFRecordReader::TFRecordReader(TFRecordReader&&) noexcept = default;
TFRecordReader& TFRecordReader::operator=(TFRecordReader&&) noexcept = default;

size_t TFRecordReader::fill(size_t need) {
  size_t avail = end_ - pos_;
  if (avail >= need || source_done_) return avail;
  if (source_->reserve() > 0) {
    // Move to the source's next block, the unconsumed bytes (fewer than reserve()) in front.
    while (avail < need) {
      const Source::BlockView block = source_->next_block();
      if (block.data == nullptr) {
        source_done_ = true;
        break;
      }
      if (avail > 0) std::memcpy(block.data + block.begin - avail, data_ + pos_, avail);
      data_ = block.data;
      pos_ = block.begin - avail;
      end_ = block.end;
      source_offset_ += block.end - block.begin;
      avail = end_ - pos_;
    }
    return avail;
  }
  // Keep the unconsumed bytes, placed so that the read lands at an address congruent to its file
  // offset modulo kAlign: the kernel's copy out of the page cache is then cache-line aligned on
  // both sides, which on some CPUs doubles its speed.
  const size_t start = base_ + static_cast<size_t>((source_offset_ - avail) % kAlign);
  if (pos_ != start) {
    std::memmove(buffer_.data() + start, buffer_.data() + pos_, avail);
    pos_ = start;
    end_ = start + avail;
  }
  // Fill the whole buffer: one large read serves many small records.
  const size_t want = buffer_.size() - end_;
  const size_t got = source_->read(buffer_.data() + end_, want);
  source_offset_ += got;
  if (got < want) source_done_ = true;
  end_ += got;
  return end_ - pos_;
}

void TFRecordReader::fail_truncated(uint64_t start) {
  // Why the stream ended early, when the source knows (a compressed stream cut or corrupt).
  std::string why;
  try {
    source_->check_end();
  } catch (const DataLoss& e) {
    why = str_cat(": ", e.what());
  }
  fail(str_cat("truncated record at ", start, why));
}

std::string TFRecordReader::where() const {
  return str_cat(" [file: ", path_, ", record: ", record_index_, "]");
}

void TFRecordReader::fail(std::exception_ptr error) {
  error_ = std::move(error);
  std::rethrow_exception(error_);
}

void TFRecordReader::fail(const std::string& words) {
  fail(std::make_exception_ptr(DataLoss(words + where())));
}

void TFRecordReader::seek(uint64_t offset, int64_t record_index) {
  uint64_t skipped = 0;
  try {
    skipped = source_->skip(offset);
  } catch (const DataLoss& e) {
    fail(e.what());
  }
  source_offset_ += skipped;
  if (skipped < offset) {
    fail(
        str_cat("cannot seek to offset ", offset, ": the record stream holds ", skipped, " bytes"));
  }
  offset_ = offset;
  record_index_ = record_index;
}

bool TFRecordReader::read_view(std::string_view& record) {
  if (error_) std::rethrow_exception(error_);
  const uint64_t start = offset_;
  size_t avail;
  try {
    avail = fill(kHeaderSize);
    if (avail == 0) {
      source_->check_end();
      return false;
    }
  } catch (const DataLoss& e) {
    fail(e.what());
  }
  if (avail < kHeaderSize) fail_truncated(start);

  const char* header = data_ + pos_;
  const uint64_t length = load_u64_le(header);
  if (unmask_crc32c(load_u32_le(header + 8)) != crc32c(header, 8)) {
    fail(str_cat("corrupted record at ", start,
                 start == 0 ? " (Is this even a TFRecord file?)" : ""));
  }
  if (length > max_record_size_ || length >= SIZE_MAX - kHeaderSize - kFooterSize) {
    fail(std::make_exception_ptr(ResourceExhausted(str_cat(
        "record at ", start, " declares ", length, " bytes, more than the maximum record size of ",
        max_record_size_, " bytes", where()))));
  }
  pos_ += kHeaderSize;

  const size_t n = static_cast<size_t>(length);
  try {
    // Large records not yet buffered are read from the stream straight into their destination,
    // saving a copy; the rest are checked in place and copied once by the caller, if at all.
    const bool direct =
        n + kFooterSize > capacity_ || (n >= capacity_ / 4 && n + kFooterSize > end_ - pos_);
    if (!direct) {
      if (fill(n + kFooterSize) < n + kFooterSize) fail_truncated(start);
      const char* data = data_ + pos_;
      if (unmask_crc32c(load_u32_le(data + n)) != crc32c(data, n)) {
        fail(str_cat("corrupted record at ", start + kHeaderSize));
      }
      record = std::string_view(data, n);
      pos_ += n + kFooterSize;
    } else {
      // What is buffered, then the rest straight from the stream.
      // The CRC is extended over each piece as it arrives, while its bytes are still in cache.
      scratch_.clear();
      const size_t buffered = std::min(n, end_ - pos_);
      scratch_.append(data_ + pos_, buffered);
      uint32_t crc = crc32c(scratch_);
      pos_ += buffered;
      while (scratch_.size() < n) {
        const size_t old = scratch_.size();
        const size_t step = std::min(n - old, kLargeRecordStep);
        scratch_.resize(old + step);
        const size_t got = source_done_ ? 0 : source_->read(scratch_.data() + old, step);
        source_offset_ += got;
        if (got < step) {
          source_done_ = true;
          fail_truncated(start);
        }
        crc = crc32c_extend(crc, scratch_.data() + old, got);
      }
      if (fill(kFooterSize) < kFooterSize) fail_truncated(start);
      const uint32_t stored = load_u32_le(data_ + pos_);
      pos_ += kFooterSize;
      if (unmask_crc32c(stored) != crc) {
        scratch_.clear();
        fail(str_cat("corrupted record at ", start + kHeaderSize));
      }
      record = scratch_;
    }
  } catch (const DataLoss& e) {
    if (error_) throw;  // Already framed by fail().
    fail(e.what());     // A decompression error: add the record index.
  }
  offset_ = start + kHeaderSize + n + kFooterSize;
  ++record_index_;
  return true;
}

bool TFRecordReader::read(std::string& record) {
  std::string_view view;
  if (!read_view(view)) return false;
  if (view.data() == scratch_.data()) {
    record.swap(scratch_);  // Already in a string of its own: no second copy.
  } else {
    record.assign(view);
  }
  return true;
}

}  // namespace sluice
