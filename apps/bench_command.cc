// `sluice bench`: runs a pipeline flat out and reports its throughput and per-stage table.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "apps/report.h"
#include "core/errors.h"
#include "core/strings.h"
#include "dataset/dataset.h"
#include "formats/tfrecord_reader.h"

namespace sluice::app {
namespace {

using Clock = std::chrono::steady_clock;

struct RunResult {
  int64_t elements = 0;
  double seconds = 0;
  std::string table;
};

// Iterates `ds` to the end, counting the rows of every batch.
RunResult drain(const Dataset& ds, const Options& options) {
  RunResult result;
  const auto start = Clock::now();
  Iterator it = ds.make_iterator(options);
  while (auto e = it.next()) result.elements += (*e)[0].rank() == 0 ? 1 : (*e)[0].dim(0);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.table = it.stats_table();
  return result;
}

// A fixed amount of arithmetic: CPU-bound work whose cost does not depend on the clock.
uint64_t spin(uint64_t iterations, uint64_t seed) {
  uint64_t x = seed | 1;
  for (uint64_t i = 0; i < iterations; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

uint64_t iterations_per_microsecond() {
  constexpr uint64_t kProbe = 20'000'000;
  const auto start = Clock::now();
  volatile uint64_t sink = spin(kProbe, 7);
  (void)sink;
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  return static_cast<uint64_t>(static_cast<double>(kProbe) / us);
}

void run_overhead(int64_t elements, int threads, bool json) {
  const Dataset ds = Dataset::range(elements)
                         .map([](const Tensor& x) { return Tensor::scalar(x.item<int64_t>() + 1); },
                              {.num_parallel_calls = kAutotune})
                         .batch(1024);
  Options options;
  options.threads = threads > 0 ? std::optional<int>(threads) : std::nullopt;
  const RunResult r = drain(ds, options);
  std::printf("pipeline: range(%lld) -> map(x+1, AUTOTUNE) -> batch(1024), deterministic\n%s",
              static_cast<long long>(elements), r.table.c_str());
  Report report;
  report.add("elements", static_cast<long long>(r.elements));
  report.add("seconds", r.seconds, 3);
  report.add("ns_per_element", r.seconds * 1e9 / static_cast<double>(r.elements), 1);
  report.add("elements_per_sec", static_cast<double>(r.elements) / r.seconds);
  report.print(json);
}

void run_map_scaling(int64_t elements, double cost_us, bool json) {
  const uint64_t iterations = static_cast<uint64_t>(cost_us * iterations_per_microsecond());
  const Dataset ds = Dataset::range(elements).map(
      [iterations](const Tensor& x) {
        return Tensor::scalar(static_cast<int64_t>(spin(iterations, x.item<int64_t>()) & 0xFF));
      },
      {.num_parallel_calls = kAutotune});
  Report report;
  double rate[3] = {0, 0, 0};
  for (int threads : {1, 2}) {
    Options options;
    options.threads = threads;
    const RunResult r = drain(ds, options);
    rate[threads] = static_cast<double>(r.elements) / r.seconds;
    std::printf("threads=%d: %.0f elements/s\n%s", threads, rate[threads], r.table.c_str());
  }
  report.add("cost_us", cost_us, 1);
  report.add("elements_per_sec_1", rate[1]);
  report.add("elements_per_sec_2", rate[2]);
  report.add("speedup", rate[2] / rate[1], 2);
  report.print(json);
}

// Every record of `files` with both CRCs checked; returns the records read.
int64_t read_records(const std::vector<std::string>& files) {
  int64_t records = 0;
  for (const std::string& file : files) {
    TFRecordReader reader(file, TFRecordReaderOptions{.compression = Compression::kAuto,
                                                      .buffer_size = 1 << 20});
    std::string_view record;
    while (reader.read_view(record)) ++records;
  }
  return records;
}

// `cat FILE > /dev/null`: read() of 1 MiB blocks into one page-aligned buffer (as cat's own),
// nothing looked at.
int64_t read_plain(const std::vector<std::string>& files, char* block, size_t block_size) {
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

// Reads the files as TFRecords (every CRC checked, one thread) and as plain bytes, alternating,
// `rounds` times each after one plain warm-up read that brings them into the page cache; reports
// the best round of each, so both figures come from the same run on the same cached bytes.
void run_tfrecord(const std::vector<std::string>& files, int rounds, bool json) {
  constexpr size_t kBlock = 1 << 20;
  const std::unique_ptr<char, decltype(&std::free)> block(
      static_cast<char*>(std::aligned_alloc(4096, kBlock)), &std::free);
  int64_t bytes = read_plain(files, block.get(), kBlock);  // Warm-up.
  int64_t records = 0;
  double best_records = 1e300;
  double best_plain = 1e300;
  for (int round = 0; round < std::max(rounds, 1); ++round) {
    best_records = std::min(best_records, seconds_of([&] { records = read_records(files); }));
    best_plain = std::min(best_plain, seconds_of([&] { bytes = read_plain(files, block.get(), kBlock); }));
  }
  const double gb = static_cast<double>(bytes) / 1e9;
  std::printf("%zu file(s), %lld bytes, %lld records, best of %d rounds, one thread\n",
              files.size(), static_cast<long long>(bytes), static_cast<long long>(records),
              std::max(rounds, 1));
  std::printf("%-34s %10s %10s\n", "stage", "seconds", "GB/s");
  std::printf("%-34s %10.3f %10.2f\n", "tfrecord read (every CRC checked)", best_records,
              gb / best_records);
  std::printf("%-34s %10.3f %10.2f\n", "cat (read() of 1 MiB blocks)", best_plain,
              gb / best_plain);
  Report report;
  report.add("records", static_cast<long long>(records));
  report.add("bytes", static_cast<long long>(bytes));
  report.add("gb_per_sec", gb / best_records, 2);
  report.add("cat_gb_per_sec", gb / best_plain, 2);
  report.add("ratio", best_plain / best_records, 3);
  report.print(json);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Run a pipeline flat out and report its throughput");
  bench->require_subcommand(1);

  struct Flags {
    int64_t elements;
    int threads = 0;
    double cost_us = 50;
    bool json = false;
  };

  auto overhead_flags = std::make_shared<Flags>(Flags{50'000'000});
  auto* overhead = bench->add_subcommand(
      "overhead", "range -> map(x+1) -> batch(1024): the engine's cost per element");
  overhead->add_option("--elements", overhead_flags->elements, "Elements to run through")
      ->capture_default_str();
  overhead->add_option("--threads", overhead_flags->threads, "Thread budget (default: all cores)");
  overhead->add_flag("--json", overhead_flags->json, "Print the last line as JSON");
  overhead->callback([f = overhead_flags] { run_overhead(f->elements, f->threads, f->json); });

  auto scaling_flags = std::make_shared<Flags>(Flags{20'000});
  auto* scaling = bench->add_subcommand(
      "map-scaling", "A CPU-bound parallel map at 1 and 2 threads, side by side");
  scaling->add_option("--elements", scaling_flags->elements, "Elements per run")
      ->capture_default_str();
  scaling->add_option("--cost-us", scaling_flags->cost_us, "Work per element in microseconds")
      ->capture_default_str();
  scaling->add_flag("--json", scaling_flags->json, "Print the last line as JSON");
  scaling->callback([f = scaling_flags] { run_map_scaling(f->elements, f->cost_us, f->json); });

  struct TFRecordFlags {
    std::vector<std::string> files;
    int rounds = 5;
    bool json = false;
  };
  auto tfrecord_flags = std::make_shared<TFRecordFlags>();
  auto* tfrecord = bench->add_subcommand(
      "tfrecord", "Read TFRecord files checking every CRC, and the same files like cat, side by side");
  tfrecord->add_option("files", tfrecord_flags->files, "TFRecord files (GZIP recognised by its magic bytes)")
      ->required();
  tfrecord->add_option("--rounds", tfrecord_flags->rounds, "Timed reads of each kind; the best counts")
      ->capture_default_str();
  tfrecord->add_flag("--json", tfrecord_flags->json, "Print the last line as JSON");
  tfrecord->callback(
      [f = tfrecord_flags] { run_tfrecord(f->files, f->rounds, f->json); });
}

}  // namespace sluice::app
