// The benchmarks of `sluice bench`, one file each (bench_engine.cc, bench_tfrecord.cc,
// bench_images.cc, bench_autotune.cc), and what they share; bench_command.cc registers them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/report.h"
#include "sluice/dataset/dataset.h"

namespace sluice::app {

using Clock = std::chrono::steady_clock;

struct RunResult {
  int64_t elements = 0;
  double seconds = 0;
  std::string table;
  Iterator::TraceCounts trace;  // Of the trace written, if one was.
};

// Iterates `ds` to the end, counting the rows of every batch. With a `trace_path`, the run is
// traced (Iterator::start_trace) and the trace written there.
RunResult drain(const Dataset& ds, const Options& options, const std::string& trace_path = "");

// `--trace FILE`'s line before the last, and its fields in the last line (trace_events,
// trace_dropped), when `trace_path` is not empty.
void report_trace(const std::string& trace_path, const RunResult& traced, Report& report);

// CPU seconds of all the process's threads: on a shared machine, where wall time depends on what
// else runs, the fairer comparison of one-thread work.
double process_cpu_seconds();

// CPU work of a known cost for synthetic stages: `iterations` steps of a generator that the
// compiler cannot elide, and how many of them take a microsecond on this machine.
uint64_t spin(uint64_t iterations, uint64_t seed);
uint64_t iterations_per_microsecond();

// bench overhead: range -> map(x+1) -> batch(1024), the engine's cost per element; the run is
// traced into `trace_path` if one is given.
void run_overhead(int64_t elements, int threads, bool json, const std::string& trace_path);
// bench map-scaling: a CPU-bound parallel map at 1 and 2 threads, side by side; the run at 2
// threads is traced into `trace_path` if one is given.
void run_map_scaling(int64_t elements, double cost_us, bool json, const std::string& trace_path);
// bench tfrecord: the files read as TFRecords (every CRC checked) and as plain bytes. The timed
// reads use the reader alone; with a `trace_path`, one more untimed pass reads the files through
// TFRecordDataset, traced.
void run_tfrecord(const std::vector<std::string>& files, int rounds, bool json,
                  const std::string& trace_path);
struct AutotuneBenchFlags {
  int64_t elements = 20'000;  // Of the unbalanced pipeline.
  double cost_us = 5;         // Its cheap map's work per element; the costly map does 10x.
  int64_t images =
      6'144;  // Of the image pipeline: passes of a second or more, long beside the tuning period.
  int threads = 0;
  int rounds = 3;
  bool json = false;
};

// bench autotune: AUTOTUNE against every hand-tuned configuration, (a) of an unbalanced pipeline
// (a cheap map, then one 10x costlier) and (b) of an image pipeline, side by side.
void run_autotune(const AutotuneBenchFlags& f);

struct ImagesFlags {
  std::string dir;
  int64_t size = 128;
  int64_t batch = 32;
  bool augment = false;
  bool decode_only = false;
  bool compare = false;
  // Non-empty: the pipeline and a uint8 decode, each beside a snapshot of its batches under this
  // folder.
  std::string snapshot;
  int threads = 0;
  int epochs = 3;
  bool json = false;
  // The last timed pass of the pipeline measured (under --compare, the generator's) is traced
  // into this file.
  std::string trace;
};

// bench images: an image folder (or an archive of one) decoded, resized, [augmented], batched.
void run_images(const ImagesFlags& f);

}  // namespace sluice::app
