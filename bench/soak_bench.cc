// Soak benchmark: resident memory and threads over a long run of an image pipeline.
//
// 1. Writes a folder of JPEGs (one sub-folder per class) in a temporary directory.
// 2. Runs `--epochs` epochs of list → shuffle → parallel read/decode/augment map → batch →
//    prefetch through one iterator, printing the resident set size (RSS) after each epoch. From
//    the end of epoch 2 on, RSS must stay within `--max-rss-growth` (5%) of its value then.
// 3. Creates and destroys `--iterators` iterators of the same pipeline (batches of one image),
//    each pulling one element, and prints the thread count and RSS before and after: no feeder
//    thread may be left behind, the process may not gain more threads than oneTBB's pool can
//    hold, and RSS must stay within the same bound.
// Exits 1 when a bound is broken. The last line is key=value pairs.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

#include "sluice/core/random.h"
#include "sluice/core/threads.h"
#include "sluice/dataset/dataset.h"
#include "sluice/dataset/image_folder.h"
#include "sluice/formats/jpeg.h"
#include "sluice/graph/async_stage.h"
#include "sluice/ops/convert.h"
#include "sluice/ops/crop.h"
#include "sluice/ops/flip.h"
#include "sluice/ops/image_codec.h"
#include "sluice/ops/resize.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

struct Args {
  int64_t images = 2000;
  int64_t classes = 4;
  int64_t size = 160;  // Longest side of the generated JPEGs.
  int64_t epochs = 10;
  int64_t iterators = 10000;
  int64_t batch = 32;
  double max_rss_growth = 0.05;
};

void usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [--images N] [--classes N] [--size PIXELS] [--epochs N] "
               "[--iterators N] [--batch N] [--max-rss-growth FRACTION]\n",
               program);
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage(argv[0]);
    const char* value = argv[++i];
    if (flag == "--images") {
      args.images = std::atoll(value);
    } else if (flag == "--classes") {
      args.classes = std::atoll(value);
    } else if (flag == "--size") {
      args.size = std::atoll(value);
    } else if (flag == "--epochs") {
      args.epochs = std::atoll(value);
    } else if (flag == "--iterators") {
      args.iterators = std::atoll(value);
    } else if (flag == "--batch") {
      args.batch = std::atoll(value);
    } else if (flag == "--max-rss-growth") {
      args.max_rss_growth = std::atof(value);
    } else {
      usage(argv[0]);
    }
  }
  if (args.images < args.batch || args.classes < 1 || args.size < 32 || args.epochs < 3 ||
      args.iterators < 0 || args.batch < 1) {
    std::fprintf(stderr, "need images >= batch >= 1, classes >= 1, size >= 32, epochs >= 3\n");
    std::exit(2);
  }
  return args;
}

// A field of /proc/self/status ("VmRSS:", "Threads:") as a number (kB for sizes).
int64_t status_field(const std::string& name) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(name, 0) == 0) return std::atoll(line.c_str() + name.size());
  }
  return -1;
}
double rss_mib() { return static_cast<double>(status_field("VmRSS:")) / 1024.0; }
int64_t threads() { return status_field("Threads:"); }

// Smooth gradients with noise, so the JPEGs are of realistic size and cost to decode.
void write_images(const std::string& root, const Args& args) {
  std::mt19937 rng(42);
  for (int64_t i = 0; i < args.images; ++i) {
    const std::string dir = root + "/class_" + std::to_string(i % args.classes);
    fs::create_directories(dir);
    const int64_t h = args.size * 3 / 4 + static_cast<int64_t>(rng() % (args.size / 4 + 1));
    const int64_t w = args.size * 3 / 4 + static_cast<int64_t>(rng() % (args.size / 4 + 1));
    Tensor image(DType::kUInt8, {h, w, 3});
    uint8_t* p = image.data<uint8_t>();
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        for (int c = 0; c < 3; ++c) {
          *p++ = static_cast<uint8_t>((x * (c + 1) + y * (3 - c) + i * 13 + rng() % 24) & 0xFF);
        }
      }
    }
    std::ofstream out(dir + "/img_" + std::to_string(i) + ".jpg", std::ios::binary);
    const std::string bytes = encode_jpeg(image, {.quality = 90});
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
}

// Read, decode, random crop of 7/8 of the side, random flip, resize to 96x96, scale to [0, 1].
Element augment(Element e, const ElementContext& context) {
  Random random = context.random();
  const Tensor image = decode_jpeg(read_file(e["path"]), 3);
  const int64_t side = std::min(image.shape()[0], image.shape()[1]) * 7 / 8;
  Tensor crop = random_crop(image, Shape{side, side, 3}, random);
  crop = random_flip_left_right(crop, random);
  Tensor resized = resize(crop, {96, 96});
  return Element{{"image", rescale(resized, 1.0f / 255.0f)}, {"label", e["label"]}};
}

Dataset pipeline(const ImageFolder& folder, int64_t batch, int64_t epochs) {
  return folder.dataset.shuffle(static_cast<int64_t>(folder.filenames.size()), 7)
      .repeat(epochs)
      .map(augment, {.num_parallel_calls = kAutotune, .seed = 11})
      .batch(batch, /*drop_remainder=*/true)
      .prefetch(kAutotune);
}

int run(const Args& args) {
  const fs::path root = fs::temp_directory_path() / ("sluice_soak_" + std::to_string(::getpid()));
  fs::remove_all(root);
  write_images(root.string(), args);
  const ImageFolder folder =
      image_folder(root.string(), {.class_mode = ClassMode::kSparse, .verbose = false});
  const int64_t files = static_cast<int64_t>(folder.filenames.size());
  // Batches run across epoch boundaries (batch follows repeat): epoch e ends within batch
  // floor(e * files / batch).
  auto batches_by_end_of = [&](int64_t epoch) { return epoch * files / args.batch; };
  std::printf("soak: %zu JPEGs (about %lldx%lld) in %lld classes, batch %lld, %lld epochs\n",
              folder.filenames.size(), static_cast<long long>(args.size),
              static_cast<long long>(args.size), static_cast<long long>(args.classes),
              static_cast<long long>(args.batch), static_cast<long long>(args.epochs));
  std::printf("start: rss=%.1f MiB threads=%lld\n", rss_mib(), static_cast<long long>(threads()));

  bool ok = true;
  double rss_epoch2 = 0;
  double rss_max_after_2 = 0;
  double worst_growth = 0;
  const auto start = std::chrono::steady_clock::now();
  {
    Iterator it = pipeline(folder, args.batch, args.epochs).make_iterator();
    int64_t batches = 0;
    for (int64_t epoch = 1; epoch <= args.epochs; ++epoch) {
      for (; batches < batches_by_end_of(epoch); ++batches) {
        if (!it.next()) {
          std::fprintf(stderr, "soak: the data ended early, in epoch %lld\n",
                       static_cast<long long>(epoch));
          return 1;
        }
      }
      const double rss = rss_mib();
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("epoch %2lld: rss=%.1f MiB threads=%lld (%.1f s)\n",
                  static_cast<long long>(epoch), rss, static_cast<long long>(threads()), seconds);
      if (epoch == 2) rss_epoch2 = rss;
      if (epoch > 2) {
        rss_max_after_2 = std::max(rss_max_after_2, rss);
        worst_growth = std::max(worst_growth, rss / rss_epoch2 - 1.0);
      }
    }
    if (it.next()) {
      std::fprintf(stderr, "soak: more batches than %lld epochs hold\n",
                   static_cast<long long>(args.epochs));
      return 1;
    }
  }
  const double images_per_sec =
      static_cast<double>(batches_by_end_of(args.epochs) * args.batch) /
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (worst_growth > args.max_rss_growth) {
    std::printf("FAIL: RSS grew %.1f%% after epoch 2 (bound %.1f%%)\n", 100 * worst_growth,
                100 * args.max_rss_growth);
    ok = false;
  } else {
    std::printf("RSS after epoch 2 stays within %.1f%% of it (largest growth %.2f%%)\n",
                100 * args.max_rss_growth, 100 * worst_growth);
  }

  // Iterators made and dropped, each after its first element: the pipeline is running (parallel
  // decode, prefetch filling) when it is destroyed. Batches of one image keep the 10,000 rounds
  // short. A first tenth of the rounds warms up, so that oneTBB's worker pool, which grows on
  // demand and lives as long as the process, and the allocator's per-thread arenas are counted
  // in the "before" figures.
  const Dataset endless = pipeline(folder, 1, -1);
  auto make_and_drop = [&](int64_t rounds) {
    for (int64_t i = 0; i < rounds; ++i) {
      Iterator it = endless.make_iterator();
      if (!it.next()) throw std::runtime_error("an endless pipeline ended");
    }
  };
  make_and_drop(args.iterators / 10);
  std::this_thread::sleep_for(std::chrono::seconds(1));  // oneTBB starts its workers lazily.
  const int64_t threads_before = threads();
  const double rss_before = rss_mib();
  make_and_drop(args.iterators);
  const int64_t threads_after = threads();
  const double rss_after = rss_mib();
  std::printf("%lld iterators: threads %lld -> %lld, rss %.1f -> %.1f MiB\n",
              static_cast<long long>(args.iterators), static_cast<long long>(threads_before),
              static_cast<long long>(threads_after), rss_before, rss_after);
  // The pipeline's own threads are counted exactly. The process's count is not exact: oneTBB may
  // start a worker past its limit while another is still leaving, so the pool can gain up to a
  // budget's worth of threads; a thread lost per iterator would add hundreds.
  if (live_feeder_threads() != 0) {
    std::printf("FAIL: %d feeder threads left behind\n", live_feeder_threads());
    ok = false;
  }
  if (threads_after > threads_before + ThreadBudget::current()) {
    std::printf("FAIL: %lld threads gained, more than oneTBB's pool of %d can explain\n",
                static_cast<long long>(threads_after - threads_before), ThreadBudget::current());
    ok = false;
  }
  const double iterator_growth = rss_after / rss_before - 1.0;
  if (iterator_growth > args.max_rss_growth) {
    std::printf("FAIL: RSS grew %.1f%% over the iterators (bound %.1f%%)\n", 100 * iterator_growth,
                100 * args.max_rss_growth);
    ok = false;
  }
  fs::remove_all(root);
  std::printf(
      "epochs=%lld images_per_sec=%.0f rss_epoch2_mib=%.1f rss_max_after_epoch2_mib=%.1f "
      "rss_growth_pct=%.2f iterators=%lld threads_before=%lld threads_after=%lld "
      "rss_before_iterators_mib=%.1f rss_after_iterators_mib=%.1f ok=%s\n",
      static_cast<long long>(args.epochs), images_per_sec, rss_epoch2, rss_max_after_2,
      100 * worst_growth, static_cast<long long>(args.iterators),
      static_cast<long long>(threads_before), static_cast<long long>(threads_after), rss_before,
      rss_after, ok ? "true" : "false");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  // The process's thread budget (all cores): what its pipelines and strategies take.
  const sluice::ThreadBudget budget;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // Progress lines as they happen, also into a file.
  try {
    return sluice::run(sluice::parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soak: %s\n", e.what());
    return 1;
  }
}
