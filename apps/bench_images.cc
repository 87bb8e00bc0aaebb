// bench images: an image folder, or an archive of one, decoded, resized, [augmented] and
// batched, beside the bounds that tell a slow stage from a short ratio.
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/bench.h"
#include "apps/report.h"
#include "sluice/core/errors.h"
#include "sluice/core/file_system.h"
#include "sluice/core/strings.h"
#include "sluice/core/threads.h"
#include "sluice/dataset/folder_splits.h"
#include "sluice/dataset/image_data_generator.h"
#include "sluice/dataset/image_folder.h"
#include "sluice/formats/image.h"
#include "sluice/formats/jpeg.h"
#include "sluice/ops/image_codec.h"
#include "sluice/ops/resize.h"

namespace sluice::app {
namespace {

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
  // The pipeline's decoded batches snapshotted (Dataset::snapshot): the first pass writes them,
  // later passes serve them from the mapped files.
  kSnapshot,
  // Files read, decoded [DCT-scaled] to uint8 pixels at the target size, batched: the decoded
  // images as FFCV stores them, four times fewer bytes than float32; and its snapshot.
  kDecodeUint8,
  kSnapshotUint8,
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
    case ImagesMode::kDecodeUint8:
    case ImagesMode::kSnapshotUint8: {
      pipeline =
          str_cat("image_folder_files(AUTOTUNE) -> map(decode_jpeg at the DCT scale >= ", f.size,
                  " + resize nearest to ", f.size, ", uint8, AUTOTUNE) -> batch(", f.batch, ")");
      const Dataset batches =
          image_folder_files(folder, kAutotune)
              .map(
                  [size](const Element& e) {
                    const std::string& b = e["bytes"].item<std::string>();
                    return Element{{"image", resize(decode_image_at_least(b, size, 3), size,
                                                    ResizeMethod::kNearest)},
                                   {"label", e["label"]}};
                  },
                  {.num_parallel_calls = kAutotune})
              .batch(f.batch);
      if (mode == ImagesMode::kDecodeUint8) return batches.prefetch(2);
      const std::string dir = f.snapshot + "/uint8";
      pipeline = str_cat("snapshot(", dir, ") of: ", pipeline);
      return batches.snapshot(dir).prefetch(2);
    }
    case ImagesMode::kPipeline:
    case ImagesMode::kAugment:
    case ImagesMode::kSnapshot:
      break;
  }
  const bool augment = mode == ImagesMode::kAugment || (mode == ImagesMode::kSnapshot && f.augment);
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
  // Beside a snapshot, both pipelines are seeded alike: the snapshot is of the same batches.
  const Dataset batches =
      image_data_generator(augmentation)
          .flow_from_directory(
              f.dir, {.target_size = {f.size, f.size},
                      .batch_size = f.batch,
                      .class_mode = ClassMode::kSparse,
                      .seed = f.snapshot.empty() ? std::nullopt : std::optional<uint64_t>(1),
                      .interpolation = ResizeMethod::kBilinear,
                      .verbose = false})
          .dataset;
  if (mode == ImagesMode::kSnapshot) {
    const std::string dir = f.snapshot + "/float32";
    pipeline = str_cat("snapshot(", dir, ") of the batches of: ", pipeline);
    return batches.snapshot(dir).prefetch(2);
  }
  return batches.prefetch(2);
}

// One timed pass of `run`: its images/s is kept, and the pass if it is the fastest yet. With a
// `trace_path`, the pass is traced and `traced` keeps its result.
void time_pass(ImagesRun& run, const Options& options, const std::string& trace_path = "",
               RunResult* traced = nullptr) {
  const double cpu_start = process_cpu_seconds();
  RunResult r = drain(run.dataset, options, trace_path);
  if (traced != nullptr) *traced = r;
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

// The bytes/s at which `threads` threads read every byte of the snapshot files under `folder`
// once, through fresh mappings as a reader makes them (an xor of its words, which the memory
// system bounds, not the arithmetic): the most a reader that checks what it serves can reach.
// Best of `passes`. Returns {bytes per pass, bytes/s}.
std::pair<uint64_t, double> mapped_read_bound(const std::string& folder, int threads, int passes) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
    if (entry.is_regular_file() && entry.path().extension() == ".snapshot") {
      files.push_back(entry.path().string());
    }
  }
  constexpr size_t kBlock = size_t{1} << 20;
  oneapi::tbb::task_arena arena(threads);
  uint64_t bytes = 0;
  double best = 0;
  for (int pass = 0; pass < passes; ++pass) {
    bytes = 0;
    oneapi::tbb::enumerable_thread_specific<uint64_t> xors(0);
    const auto start = std::chrono::steady_clock::now();
    for (const std::string& file : files) {
      const MappedFile mapped(file);
      const auto* words = reinterpret_cast<const uint64_t*>(mapped.data());
      const size_t count = mapped.size() / sizeof(uint64_t);
      arena.execute([&] {
        oneapi::tbb::parallel_for(size_t{0}, (count * 8 + kBlock - 1) / kBlock, [&](size_t b) {
          uint64_t x = 0;
          const size_t end = std::min(count, (b + 1) * kBlock / 8);
          for (size_t i = b * kBlock / 8; i < end; ++i) x ^= words[i];
          xors.local() ^= x;
        });
      });
      bytes += mapped.size();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    uint64_t x = 0;
    for (uint64_t v : xors) x ^= v;
    // The xor is printed nowhere but must not be optimised away.
    if (x == 0x5eed) std::fputc('\0', stderr);
    best = std::max(best, static_cast<double>(bytes) / seconds);
  }
  return {bytes, best};
}

// One mode (decode-only or the generator, [augmented]), or with --compare every mode, the passes
// interleaved (one pass of each mode per round) so that all see the same machine. Each mode runs
// once to warm up (page cache, allocator, thread arenas), then `epochs` timed passes; the fastest
// pass is its table and images/s.

}  // namespace

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
  if (!f.snapshot.empty()) {
    if (f.compare || f.decode_only) {
      throw InvalidArgument(
          "bench images: --snapshot goes with neither --compare nor --decode-only");
    }
    runs = {{f.augment ? ImagesMode::kAugment : ImagesMode::kPipeline, "pipeline"},
            {ImagesMode::kSnapshot, "snapshot"},
            {ImagesMode::kDecodeUint8, "decode_u8"},
            {ImagesMode::kSnapshotUint8, "snapshot_u8"}};
  } else if (f.compare) {
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
           r.mode != ImagesMode::kReadDecode && r.mode != ImagesMode::kSnapshot &&
           r.mode != ImagesMode::kDecodeUint8 && r.mode != ImagesMode::kSnapshotUint8;
  });
  const Tensor bytes = need_bytes ? folder_bytes(folder, options) : Tensor();
  for (ImagesRun& run : runs) {
    run.dataset = images_dataset(run.mode, f, folder, bytes, run.pipeline);
  }
  for (ImagesRun& run : runs) drain(run.dataset, options);  // Warm-up.
  const int passes = std::max(f.epochs, 1);
  // The pipeline whose last pass --trace records: the generator's under --compare.
  const size_t traced_run = f.compare ? 1 : 0;
  RunResult traced;
  for (int pass = 0; pass < passes; ++pass) {
    for (size_t i = 0; i < runs.size(); ++i) {
      if (!f.trace.empty() && i == traced_run && pass == passes - 1) {
        time_pass(runs[i], options, f.trace, &traced);
      } else {
        time_pass(runs[i], options);
      }
    }
  }

  const std::string threads = f.threads > 0 ? std::to_string(f.threads) : "all";
  for (const ImagesRun& run : runs) {
    std::printf(
        "pipeline: %s\n%lld images, threads=%s, best of %d passes: %.3f s, %.0f images/s\n%s",
        run.pipeline.c_str(), static_cast<long long>(n), threads.c_str(), passes, run.best.seconds,
        images_per_sec(run), run.best.table.c_str());
  }
  Report report;
  if (!f.snapshot.empty()) {
    const ImagesRun& pipeline = runs[0];
    const ImagesRun& snapshot = runs[1];
    const ImagesRun& decode_u8 = runs[2];
    const ImagesRun& snapshot_u8 = runs[3];
    std::printf("\n%-12s %14s %14s %16s\n", "mode", "images/s best", "images/s med.",
                "cpu us/image min");
    for (const ImagesRun& run : runs) {
      std::printf("%-12s %14.0f %14.0f %16.1f\n", run.key, images_per_sec(run), median(run.rates),
                  cpu_per_image(run) * 1e6);
    }
    std::printf(
        "served from the snapshot / decoded (median over passes of the pair run back to back): "
        "float32 batches %.2fx, uint8 images %.2fx\n",
        paired_ratio(snapshot, pipeline), paired_ratio(snapshot_u8, decode_u8));
    // A snapshot's elements point into its mapping, so serving costs little but the checksum,
    // which a process pays once per record: reading each byte once bounds that first pass (and
    // a consumer that reads every pixel), four times lower for float32 than for uint8.
    const int threads = f.threads > 0 ? f.threads : ThreadBudget::current();
    const auto [float_bytes, float_rate] =
        mapped_read_bound(f.snapshot + "/float32", threads, passes);
    const double float_bound =
        float_rate * static_cast<double>(n) / static_cast<double>(float_bytes);
    std::printf(
        "read bound of the float32 snapshot (each byte read once from fresh mappings, %d threads): "
        "%.2f GB/s, %.0f images/s = %.2fx the pipeline; served / bound %.2f\n",
        threads, float_rate * 1e-9, float_bound, float_bound / images_per_sec(pipeline),
        images_per_sec(snapshot) / float_bound);
    report.add("images", static_cast<long long>(n));
    report.add("passes", static_cast<long long>(passes));
    for (const ImagesRun& run : runs) {
      report.add(str_cat(run.key, "_images_per_sec"), images_per_sec(run));
    }
    report.add("snapshot_ratio", paired_ratio(snapshot, pipeline), 2);
    report.add("snapshot_cpu_ratio", cpu_per_image(pipeline) / cpu_per_image(snapshot), 2);
    report.add("snapshot_u8_ratio", paired_ratio(snapshot_u8, decode_u8), 2);
    report.add("snapshot_u8_cpu_ratio", cpu_per_image(decode_u8) / cpu_per_image(snapshot_u8), 2);
    report.add("snapshot_read_bound_ratio", float_bound / images_per_sec(pipeline), 2);
    report.add("images_per_sec", images_per_sec(snapshot_u8));
    report.print(f.json);
    return;
  }
  if (!f.compare) {
    // CPU time per image says how much work an image costs even when other processes share the
    // cores (wall-clock rates then depend on the load); the least of the passes counts.
    const ImagesRun& run = runs[0];
    report.add("images", static_cast<long long>(run.best.elements));
    report.add("seconds", run.best.seconds, 3);
    report.add("cpu_us_per_image", run.best_cpu * 1e6 / static_cast<double>(run.best.elements), 1);
    report.add("images_per_sec", images_per_sec(run));
    report_trace(f.trace, traced, report);
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
  report_trace(f.trace, traced, report);
  report.print(f.json);
}

}  // namespace sluice::app
