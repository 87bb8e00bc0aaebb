// Google Benchmark of restoring a checkpoint as large as tpu-guide-cnn's (462 MB: its weights and
// Adam's two slots), from the page cache, side by side with the copies that bound it: reading the
// file's bytes into a fresh string (what a restore cost before it mapped the file) and into one
// buffer reused across reads (a copy out of the page cache, as `cat` does).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "sluice/core/file_system.h"
#include "sluice/estimator/checkpoint.h"

namespace sluice {
namespace {

// tpu-guide-cnn's checkpoint size: three float32 tensors of a third each.
constexpr int64_t kMegabytes = 462;

// The checkpoint, written into the temporary folder on first use and removed at exit.
const std::string& checkpoint_path() {
  static const struct File {
    std::string path = (std::filesystem::temp_directory_path() /
                        ("sluice_checkpoint_bench_" + std::to_string(::getpid())))
                           .string();
    File() {
      TensorMap tensors;
      const int64_t floats = kMegabytes * (1 << 20) / 4 / 3;
      for (int i = 0; i < 3; ++i) {
        Tensor t(DType::kFloat32, {floats});
        float* v = t.data<float>();
        for (int64_t j = 0; j < floats; ++j) v[j] = float(j % 977) * 0.001f;
        tensors.emplace("kernel_" + std::to_string(i), std::move(t));
      }
      write_checkpoint_file(path, tensors);
    }
    ~File() { std::filesystem::remove(path); }
  } file;
  return file.path;
}

void set_bytes(benchmark::State& state, const std::string& path) {
  state.SetBytesProcessed(state.iterations() * int64_t(std::filesystem::file_size(path)));
}

void BM_CheckpointRestore(benchmark::State& state) {
  const std::string& path = checkpoint_path();
  for (auto _ : state) benchmark::DoNotOptimize(read_checkpoint_file(path));
  set_bytes(state, path);
}
BENCHMARK(BM_CheckpointRestore)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReadIntoFreshString(benchmark::State& state) {
  const std::string& path = checkpoint_path();
  for (auto _ : state) benchmark::DoNotOptimize(read_whole_file(path));
  set_bytes(state, path);
}
BENCHMARK(BM_ReadIntoFreshString)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReadIntoReusedBuffer(benchmark::State& state) {
  const std::string& path = checkpoint_path();
  std::string buffer;
  for (auto _ : state) benchmark::DoNotOptimize(read_whole_file(path, buffer));
  set_bytes(state, path);
}
BENCHMARK(BM_ReadIntoReusedBuffer)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sluice

BENCHMARK_MAIN();
