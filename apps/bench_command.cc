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
#include "dataset/folder_splits.h"
#include "dataset/image_data_generator.h"
#include "dataset/image_folder.h"
#include "formats/image.h"
#include "formats/jpeg.h"
#include "formats/tfrecord_reader.h"
#include "ops/image_codec.h"
#include "ops/resize.h"

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
  bool compare = false;
  int threads = 0;
  int epochs = 3;
  bool json = false;
};

// The pipelines `bench images` measures, each over the same files and threads.
enum class ImagesMode {
  kDecodeOnly,        // Bytes in memory, full-size decode: the limit of any pipeline here.
  kPipeline,          // image_data_generator: read, decode [DCT-scaled], resize, batch.
  kAugment,           // The same with the Keras augmentation (shear, zoom, horizontal flip).
  kFullDecodeResize,  // Bytes in memory, full decode then resize: the DCT comparison's baseline.
  kDctDecodeResize,   // Bytes in memory, decode at the DCT scale that suits the target, resize.
  // Two bounds, so that a ratio short of its target can be told apart from a slow stage:
  kReadDecode,  // Files read, then decoded full size: decode-only plus the reads it leaves out.
  kDctDecode,   // Bytes in memory, the DCT-scaled decode alone: what no resize after it beats.
};

struct ImagesRun {
  ImagesMode mode;
  const char* key;  // Prefix of its fields in the last line of --compare.
  Dataset dataset = Dataset::range(0);
  std::string pipeline;
  RunResult best;
  double best_cpu = 1e300;
  std::vector<double> rates;  // images/s of every timed pass, in order.
};

// The files' bytes, read once (so in-memory pipelines measure decoding, not the filesystem).
Tensor folder_bytes(const ImageFolder& folder, const Options& options) {
  std::vector<std::string> all;
  all.reserve(folder.filenames.size());
  Iterator files = image_folder_files(folder, kAutotune).make_iterator(options);
  while (auto e = files.next()) all.push_back((*e)["bytes"].item<std::string>());
  return Tensor::from_strings(all);
}

// Each in-memory mode (and read_decode) is one task per image whose result is a scalar, so only
// the work named runs: no batching, no copies.
Dataset images_dataset(ImagesMode mode, const ImagesFlags& f, const ImageFolder& folder,
                       const Tensor& bytes, std::string& pipeline) {
  const ImageSize size{f.size, f.size};
  const auto in_memory = [&](auto fn) {
    return Dataset::from_tensor_slices(Element{bytes})
        .map(
            [fn](const Tensor& b) {
              return Tensor::scalar<int64_t>(fn(std::string_view(b.item<std::string>())).dim(0));
            },
            {.num_parallel_calls = kAutotune});
  };
  switch (mode) {
    case ImagesMode::kDecodeOnly:
      pipeline = "bytes in memory -> map(decode_jpeg full size, AUTOTUNE)";
      return in_memory([](std::string_view b) { return decode_jpeg(b, {.channels = 3}); });
    case ImagesMode::kFullDecodeResize:
      pipeline = str_cat("bytes in memory -> map(decode_jpeg full size + resize to ", f.size,
                         " bilinear, AUTOTUNE)");
      return in_memory(
          [size](std::string_view b) { return resize(decode_jpeg(b, {.channels = 3}), size); });
    case ImagesMode::kDctDecodeResize:
      pipeline = str_cat("bytes in memory -> map(decode_jpeg at the DCT scale >= ", f.size,
                         " + resize bilinear, AUTOTUNE)");
      return in_memory(
          [size](std::string_view b) { return resize(decode_image_at_least(b, size, 3), size); });
    case ImagesMode::kDctDecode:
      pipeline =
          str_cat("bytes in memory -> map(decode_jpeg at the DCT scale >= ", f.size, ", AUTOTUNE)");
      return in_memory([size](std::string_view b) { return decode_image_at_least(b, size, 3); });
    case ImagesMode::kReadDecode:
      pipeline = "image_folder_files(AUTOTUNE) -> map(decode_jpeg full size, AUTOTUNE)";
      return image_folder_files(folder, kAutotune)
          .map(
              [](const Element& e) {
                const std::string& b = e["bytes"].item<std::string>();
                return Element{Tensor::scalar<int64_t>(decode_jpeg(b, {.channels = 3}).dim(0))};
              },
              {.num_parallel_calls = kAutotune});
    case ImagesMode::kPipeline:
    case ImagesMode::kAugment:
      break;
  }
  const bool augment = mode == ImagesMode::kAugment;
  ImageDataGeneratorOptions augmentation{.rescale = 1 / 255.f};
  if (augment) {
    augmentation.shear_range = 0.2;
    augmentation.zoom_range = 0.2;
    augmentation.horizontal_flip = true;
  }
  pipeline = str_cat("image_data_generator(rescale 1/255",
                     augment ? ", shear 0.2, zoom 0.2, horizontal flip" : "",
                     ").flow_from_directory(size ", f.size, ", batch ", f.batch,
                     ", bilinear; read + decode [DCT-scaled] + resize + transform per batch "
                     "task, AUTOTUNE) -> prefetch(2)");
  return image_data_generator(augmentation)
      .flow_from_directory(f.dir, {.target_size = {f.size, f.size},
                                   .batch_size = f.batch,
                                   .class_mode = ClassMode::kSparse,
                                   .interpolation = ResizeMethod::kBilinear,
                                   .verbose = false})
      .dataset.prefetch(2);
}

// One timed pass of `run`: its images/s is kept, and the pass if it is the fastest yet.
void time_pass(ImagesRun& run, const Options& options) {
  const double cpu_start = process_cpu_seconds();
  RunResult r = drain(run.dataset, options);
  run.best_cpu = std::min(run.best_cpu, process_cpu_seconds() - cpu_start);
  run.rates.push_back(static_cast<double>(r.elements) / r.seconds);
  if (run.best.elements == 0 || r.seconds < run.best.seconds) run.best = std::move(r);
}

double images_per_sec(const ImagesRun& run) {
  return static_cast<double>(run.best.elements) / run.best.seconds;
}

// The least CPU seconds (all threads) one pass took per image: the work an image costs, which
// other processes on the machine change less than they change wall-clock rates.
double cpu_per_image(const ImagesRun& run) {
  return run.best_cpu / static_cast<double>(run.best.elements);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The median over passes of a / b, pass by pass: a and b ran back to back, so the ratio of one
// pair is little moved by what else the machine was doing then.
double paired_ratio(const ImagesRun& a, const ImagesRun& b) {
  std::vector<double> ratios;
  for (size_t i = 0; i < std::min(a.rates.size(), b.rates.size()); ++i) {
    ratios.push_back(a.rates[i] / b.rates[i]);
  }
  return median(std::move(ratios));
}

// One mode (decode-only or the generator, [augmented]), or with --compare every mode, the passes
// interleaved (one pass of each mode per round) so that all see the same machine. Each mode runs
// once to warm up (page cache, allocator, thread arenas), then `epochs` timed passes; the fastest
// pass is its table and images/s.
void run_images(const ImagesFlags& f) {
  ImageFolderOptions listing;
  listing.class_mode = ClassMode::kSparse;
  listing.verbose = false;
  // A folder with split folders is timed on its training split, read as train would read it.
  const ImageFolder folder = image_folder(find_splits(f.dir).train, listing);
  const auto n = static_cast<int64_t>(folder.filenames.size());
  if (n == 0) throw InvalidArgument(str_cat("bench images: no images in ", f.dir));
  if (f.size <= 0 || f.batch <= 0) {
    throw InvalidArgument(str_cat("bench images: --size and --batch must be positive, got ", f.size,
                                  " and ", f.batch));
  }
  Options options;
  options.threads = f.threads > 0 ? std::optional<int>(f.threads) : std::nullopt;

  std::vector<ImagesRun> runs;
  if (f.compare) {
    runs = {{ImagesMode::kDecodeOnly, "decode_only"},
            {ImagesMode::kPipeline, "pipeline"},
            {ImagesMode::kAugment, "augment"},
            {ImagesMode::kFullDecodeResize, "full_decode_resize"},
            {ImagesMode::kDctDecodeResize, "dct_decode_resize"},
            {ImagesMode::kReadDecode, "read_decode"},
            {ImagesMode::kDctDecode, "dct_decode"}};
  } else {
    runs = {{f.decode_only ? ImagesMode::kDecodeOnly
             : f.augment   ? ImagesMode::kAugment
                           : ImagesMode::kPipeline,
             "images"}};
  }
  const bool need_bytes = std::any_of(runs.begin(), runs.end(), [](const ImagesRun& r) {
    return r.mode != ImagesMode::kPipeline && r.mode != ImagesMode::kAugment &&
           r.mode != ImagesMode::kReadDecode;
  });
  const Tensor bytes = need_bytes ? folder_bytes(folder, options) : Tensor();
  for (ImagesRun& run : runs) {
    run.dataset = images_dataset(run.mode, f, folder, bytes, run.pipeline);
  }
  for (ImagesRun& run : runs) drain(run.dataset, options);  // Warm-up.
  const int passes = std::max(f.epochs, 1);
  for (int pass = 0; pass < passes; ++pass) {
    for (ImagesRun& run : runs) time_pass(run, options);
  }

  const std::string threads = f.threads > 0 ? std::to_string(f.threads) : "all";
  for (const ImagesRun& run : runs) {
    std::printf(
        "pipeline: %s\n%lld images, threads=%s, best of %d passes: %.3f s, %.0f images/s\n%s",
        run.pipeline.c_str(), static_cast<long long>(n), threads.c_str(), passes, run.best.seconds,
        images_per_sec(run), run.best.table.c_str());
  }
  Report report;
  if (!f.compare) {
    // CPU time per image says how much work an image costs even when other processes share the
    // cores (wall-clock rates then depend on the load); the least of the passes counts.
    const ImagesRun& run = runs[0];
    report.add("images", static_cast<long long>(run.best.elements));
    report.add("seconds", run.best.seconds, 3);
    report.add("cpu_us_per_image", run.best_cpu * 1e6 / static_cast<double>(run.best.elements), 1);
    report.add("images_per_sec", images_per_sec(run));
    report.print(f.json);
    return;
  }
  const ImagesRun& decode = runs[0];
  const ImagesRun& pipeline = runs[1];
  const ImagesRun& augment = runs[2];
  const ImagesRun& full = runs[3];
  const ImagesRun& dct = runs[4];
  const ImagesRun& read_decode = runs[5];
  const ImagesRun& dct_decode = runs[6];
  std::printf("\n%-22s %14s %14s %16s\n", "mode", "images/s best", "images/s med.",
              "cpu us/image min");
  for (const ImagesRun& run : runs) {
    std::printf("%-22s %14.0f %14.0f %16.1f\n", run.key, images_per_sec(run), median(run.rates),
                cpu_per_image(run) * 1e6);
  }
  std::printf(
      "ratios (median over passes of the pair run back to back): pipeline/decode-only %.3f, "
      "augment/decode-only %.3f, DCT/full decode+resize %.3f\n",
      paired_ratio(pipeline, decode), paired_ratio(augment, decode), paired_ratio(dct, full));
  std::printf(
      "bounds: read+decode/decode-only %.3f (the most a pipeline that reads its files reaches), "
      "DCT decode alone/full decode+resize %.3f (the most the DCT path reaches)\n",
      paired_ratio(read_decode, decode), paired_ratio(dct_decode, full));
  report.add("images", static_cast<long long>(n));
  report.add("passes", static_cast<long long>(passes));
  for (const ImagesRun& run : runs) {
    report.add(str_cat(run.key, "_images_per_sec"), images_per_sec(run));
    report.add(str_cat(run.key, "_cpu_us_per_image"), cpu_per_image(run) * 1e6, 1);
  }
  report.add("pipeline_ratio", paired_ratio(pipeline, decode), 3);
  report.add("augment_ratio", paired_ratio(augment, decode), 3);
  report.add("dct_speedup", paired_ratio(dct, full), 3);
  report.add("read_bound", paired_ratio(read_decode, decode), 3);
  report.add("dct_bound", paired_ratio(dct_decode, full), 3);
  report.add("pipeline_cpu_ratio", cpu_per_image(decode) / cpu_per_image(pipeline), 3);
  report.add("augment_cpu_ratio", cpu_per_image(decode) / cpu_per_image(augment), 3);
  report.add("dct_cpu_speedup", cpu_per_image(full) / cpu_per_image(dct), 3);
  report.add("images_per_sec", images_per_sec(pipeline));
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
  images->add_flag("--compare", images_flags->compare,
                   "Every mode side by side, passes interleaved: decode-only, the pipeline, "
                   "augmented, full vs DCT-scaled decode + resize, and two bounds (files read "
                   "+ decoded; the DCT-scaled decode alone); prints their ratios");
  images->add_option("--threads", images_flags->threads, "Thread budget (default: all cores)");
  images
      ->add_option("--epochs", images_flags->epochs,
                   "Timed passes (of each mode) after a warm-up; the best counts")
      ->capture_default_str();
  images->add_flag("--json", images_flags->json, "Print the last line as JSON");
  images->callback([f = images_flags] { run_images(*f); });
}

}  // namespace sluice::app
