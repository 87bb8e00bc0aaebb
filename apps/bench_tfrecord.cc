// bench tfrecord: TFRecord files read with every CRC checked, beside the same files read like
// cat.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "apps/bench.h"
#include "apps/report.h"
#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/dataset/tfrecord_dataset.h"
#include "sluice/formats/crc32c.h"
#include "sluice/formats/tfrecord_reader.h"

namespace sluice::app {
namespace {

// Every record of `files` with both CRCs checked; returns the records read.
int64_t read_records(const std::vector<std::string>& files, bool read_ahead = false) {
  int64_t records = 0;
  for (const std::string& file : files) {
    TFRecordReader reader(file, TFRecordReaderOptions{.compression = Compression::kAuto,
                                                      .buffer_size = 1 << 20,
                                                      .read_ahead = read_ahead});
    std::string_view record;
    while (reader.read_view(record)) ++records;
  }
  return records;
}

// `cat FILE > /dev/null`: read() of 1 MiB blocks into one page-aligned buffer (as cat's own),
// nothing looked at. With `crc`, the CRC-32C of all the bytes is also computed there, block by
// block, as a reader that checks every byte must at least do: the bound of such a reader on one
// thread.
int64_t read_plain(const std::vector<std::string>& files, char* block, size_t block_size,
                   uint32_t* crc = nullptr) {
  int64_t bytes = 0;
  for (const std::string& file : files) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw NotFound(str_cat("cannot open '", file, "': ", std::strerror(errno)));
    ssize_t got;
    while ((got = ::read(fd, block, block_size)) != 0) {
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        const int err = errno;
        ::close(fd);
        throw DataLoss(str_cat("read error in '", file, "': ", std::strerror(err)));
      }
      bytes += got;
      if (crc != nullptr) *crc = crc32c_extend(*crc, block, static_cast<size_t>(got));
    }
    ::close(fd);
  }
  return bytes;
}

template <class F>
double seconds_of(F&& f) {
  const auto start = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

// Reads the files as TFRecords (every CRC checked, one thread; then again with the reader's
// read-ahead thread) and as plain bytes, alternating,
// `rounds` times each after one plain warm-up read that brings them into the page cache; reports
// the best round of each, so both figures come from the same run on the same cached bytes.
void run_tfrecord(const std::vector<std::string>& files, int rounds, bool json,
                  const std::string& trace_path) {
  constexpr size_t kBlock = 1 << 20;
  const std::unique_ptr<char, decltype(&std::free)> block(
      static_cast<char*>(std::aligned_alloc(4096, kBlock)), &std::free);
  int64_t bytes = read_plain(files, block.get(), kBlock);  // Warm-up.
  int64_t records = 0;
  double best_records = 1e300;
  double best_read_ahead = 1e300;  // The same with the reader's read-ahead thread (two threads).
  double best_plain = 1e300;
  double best_bound = 1e300;  // read() and CRC, no framing: one thread's bound.
  uint32_t crc = 0;
  double cpu_records = 1e300;
  double cpu_plain = 1e300;
  for (int round = 0; round < std::max(rounds, 1); ++round) {
    double cpu = process_cpu_seconds();
    best_records = std::min(best_records, seconds_of([&] { records = read_records(files); }));
    cpu_records = std::min(cpu_records, process_cpu_seconds() - cpu);
    best_read_ahead =
        std::min(best_read_ahead, seconds_of([&] { records = read_records(files, true); }));
    cpu = process_cpu_seconds();
    best_plain =
        std::min(best_plain, seconds_of([&] { bytes = read_plain(files, block.get(), kBlock); }));
    cpu_plain = std::min(cpu_plain, process_cpu_seconds() - cpu);
    best_bound = std::min(
        best_bound, seconds_of([&] { bytes = read_plain(files, block.get(), kBlock, &crc); }));
  }
  const double gb = static_cast<double>(bytes) / 1e9;
  std::printf(
      "%zu file(s), %lld bytes, %lld records, best of %d rounds, one thread (read-ahead: two)\n",
      files.size(), static_cast<long long>(bytes), static_cast<long long>(records),
      std::max(rounds, 1));
  std::printf("%-34s %10s %10s\n", "stage", "seconds", "GB/s");
  std::printf("%-34s %10.3f %10.2f\n", "tfrecord read (every CRC checked)", best_records,
              gb / best_records);
  std::printf("%-34s %10.3f %10.2f\n", "  the same, read-ahead thread", best_read_ahead,
              gb / best_read_ahead);
  std::printf("%-34s %10.3f %10.2f\n", "cat (read() of 1 MiB blocks)", best_plain, gb / best_plain);
  std::printf("%-34s %10.3f %10.2f\n", "cat + CRC-32C of each block", best_bound, gb / best_bound);
  Report report;
  report.add("records", static_cast<long long>(records));
  report.add("bytes", static_cast<long long>(bytes));
  report.add("gb_per_sec", gb / best_records, 2);
  report.add("cat_gb_per_sec", gb / best_plain, 2);
  report.add("ratio", best_plain / best_records, 3);
  report.add("read_ahead_gb_per_sec", gb / best_read_ahead, 2);
  report.add("read_ahead_ratio", best_plain / best_read_ahead, 3);
  report.add("cpu_ratio", cpu_plain / cpu_records, 3);
  report.add("crc_bound_gb_per_sec", gb / best_bound, 2);
  report.add("bound_ratio", best_bound / best_records, 3);
  report.add("crc", static_cast<long long>(crc));  // Keeps the checksums from being dropped.
  if (!trace_path.empty()) {
    const RunResult traced = drain(TFRecordDataset(files, "AUTO"), Options(), trace_path);
    std::printf("traced pass: TFRecordDataset(AUTO), %lld records\n%s",
                static_cast<long long>(traced.elements), traced.table.c_str());
    report_trace(trace_path, traced, report);
  }
  report.print(json);
}

}  // namespace sluice::app
