// `sluice bench`: runs a pipeline flat out and reports its throughput and per-stage table.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "apps/report.h"
#include "core/errors.h"
#include "core/strings.h"
#include "dataset/dataset.h"
#include "dataset/image_data_generator.h"
#include "dataset/image_folder.h"
#include "formats/image.h"
#include "formats/jpeg.h"
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

// CPU seconds of all the process's threads: on a shared machine, where wall time depends on what
// else runs, the fairer comparison of one-thread work.
double process_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Reads the files as TFRecords (every CRC checked, one thread; then again with the reader's
// read-ahead thread) and as plain bytes, alternating,
// `rounds` times each after one plain warm-up read that brings them into the page cache; reports
// the best round of each, so both figures come from the same run on the same cached bytes.
void run_tfrecord(const std::vector<std::string>& files, int rounds, bool json) {
  constexpr size_t kBlock = 1 << 20;
  const std::unique_ptr<char, decltype(&std::free)> block(
      static_cast<char*>(std::aligned_alloc(4096, kBlock)), &std::free);
  int64_t bytes = read_plain(files, block.get(), kBlock);  // Warm-up.
  int64_t records = 0;
  double best_records = 1e300;
  double best_read_ahead = 1e300;  // The same with the reader's read-ahead thread (two threads).
  double best_plain = 1e300;
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
  Report report;
  report.add("records", static_cast<long long>(records));
  report.add("bytes", static_cast<long long>(bytes));
  report.add("gb_per_sec", gb / best_records, 2);
  report.add("cat_gb_per_sec", gb / best_plain, 2);
  report.add("ratio", best_plain / best_records, 3);
  report.add("read_ahead_gb_per_sec", gb / best_read_ahead, 2);
  report.add("read_ahead_ratio", best_plain / best_read_ahead, 3);
  report.add("cpu_ratio", cpu_plain / cpu_records, 3);
  report.print(json);
}

struct ImagesFlags {
  std::string dir;
  int64_t size = 128;
  int64_t batch = 32;
  bool augment = false;
  bool decode_only = false;
  int threads = 0;
  int epochs = 3;
  bool json = false;
};

// decode-only: the same files' bytes, held in memory, decoded at full size by a parallel map on
// the same threads: the rate no pipeline over these files can beat. Otherwise: the folder through
// image_data_generator (files read and decoded, DCT-scaled where it pays, resized, [augmented],
// converted to float, one parallel task per batch) and prefetched. Each is run `epochs` times after
// a warm-up pass; the best pass counts.
void run_images(const ImagesFlags& f) {
  ImageFolderOptions listing;
  listing.class_mode = ClassMode::kSparse;
  listing.verbose = false;
  const ImageFolder folder = image_folder(f.dir, listing);
  const auto n = static_cast<int64_t>(folder.filenames.size());
  if (n == 0) throw InvalidArgument(str_cat("bench images: no images in ", f.dir));
  Options options;
  options.threads = f.threads > 0 ? std::optional<int>(f.threads) : std::nullopt;
  Dataset ds = Dataset::range(0);
  std::string pipeline;
  if (f.decode_only) {
    std::vector<std::string> all;
    all.reserve(static_cast<size_t>(n));
    Iterator files = image_folder_files(folder, kAutotune).make_iterator(options);
    while (auto e = files.next()) all.push_back((*e)["bytes"].item<std::string>());
    ds = Dataset::from_tensor_slices(Element{Tensor::from_strings(all)})
             .map(
                 [](const Tensor& bytes) {
                   return Tensor::scalar<int64_t>(
                       decode_jpeg(bytes.item<std::string>(), {.channels = 3}).dim(0));
                 },
                 {.num_parallel_calls = kAutotune});
    pipeline = "bytes in memory -> map(decode_jpeg full size, AUTOTUNE)";
  } else {
    ImageDataGeneratorOptions augmentation{.rescale = 1 / 255.f};
    if (f.augment) {
      augmentation.shear_range = 0.2;
      augmentation.zoom_range = 0.2;
      augmentation.horizontal_flip = true;
    }
    ds = image_data_generator(augmentation)
             .flow_from_directory(f.dir, {.target_size = {f.size, f.size},
                                          .batch_size = f.batch,
                                          .class_mode = ClassMode::kSparse,
                                          .interpolation = ResizeMethod::kBilinear,
                                          .verbose = false})
             .dataset.prefetch(2);
    pipeline = str_cat("image_data_generator(rescale 1/255",
                       f.augment ? ", shear 0.2, zoom 0.2, horizontal flip" : "",
                       ").flow_from_directory(size ", f.size, ", batch ", f.batch,
                       ", bilinear; read + decode [DCT-scaled] + resize + transform per batch "
                       "task, AUTOTUNE) -> prefetch(2)");
  }
  drain(ds, options);  // Warm-up: page cache, allocator, thread arena.
  // CPU time per image says how much work an image costs even when other processes share the
  // cores (wall-clock rates then depend on the load); the least of the passes counts.
  RunResult best;
  best.seconds = 1e300;
  double best_cpu = 1e300;
  for (int epoch = 0; epoch < std::max(f.epochs, 1); ++epoch) {
    const double cpu_start = process_cpu_seconds();
    RunResult r = drain(ds, options);
    best_cpu = std::min(best_cpu, process_cpu_seconds() - cpu_start);
    if (r.seconds < best.seconds) best = std::move(r);
  }
  std::printf("pipeline: %s\n%lld images, threads=%s, best of %d passes: %.3f s\n%s",
              pipeline.c_str(), static_cast<long long>(n),
              f.threads > 0 ? std::to_string(f.threads).c_str() : "all", std::max(f.epochs, 1),
              best.seconds, best.table.c_str());
  Report report;
  report.add("images", static_cast<long long>(best.elements));
  report.add("seconds", best.seconds, 3);
  report.add("cpu_us_per_image", best_cpu * 1e6 / static_cast<double>(best.elements), 1);
  report.add("images_per_sec", static_cast<double>(best.elements) / best.seconds);
  report.print(f.json);
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
      "tfrecord",
      "Read TFRecord files checking every CRC, and the same files like cat, side by side");
  tfrecord
      ->add_option("files", tfrecord_flags->files,
                   "TFRecord files (GZIP recognised by its magic bytes)")
      ->required();
  tfrecord
      ->add_option("--rounds", tfrecord_flags->rounds, "Timed reads of each kind; the best counts")
      ->capture_default_str();
  tfrecord->add_flag("--json", tfrecord_flags->json, "Print the last line as JSON");
  tfrecord->callback([f = tfrecord_flags] { run_tfrecord(f->files, f->rounds, f->json); });
  auto images_flags = std::make_shared<ImagesFlags>();
  auto* images = bench->add_subcommand(
      "images", "An image folder (or zip/tar of one) decoded, resized, [augmented], batched");
  images
      ->add_option("dir", images_flags->dir, "Folder with one sub-folder per class, or an archive")
      ->required();
  images->add_option("--size", images_flags->size, "Target height and width")
      ->capture_default_str();
  images->add_option("--batch", images_flags->batch, "Batch size")->capture_default_str();
  images->add_flag("--augment", images_flags->augment,
                   "Keras augmentation: shear 0.2, zoom 0.2, horizontal flip");
  images->add_flag("--decode-only", images_flags->decode_only,
                   "Only decode the same files (bytes in memory) on the same threads");
  images->add_option("--threads", images_flags->threads, "Thread budget (default: all cores)");
  images
      ->add_option("--epochs", images_flags->epochs,
                   "Timed passes after a warm-up; the best counts")
      ->capture_default_str();
  images->add_flag("--json", images_flags->json, "Print the last line as JSON");
  images->callback([f = images_flags] { run_images(*f); });
}

}  // namespace sluice::app
