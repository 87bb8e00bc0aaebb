// Google Benchmark micro-benchmarks of formats/: CRC-32C (hardware and portable), reading TFRecords
// with every CRC checked next to a plain read() of the same file, parse_example of image+label
// Examples and parse_sequence_example of frame sequences, each on one core; the TFRecord read is
// measured against `cat FILE > /dev/null`, its bound. And the cost of a progressive JPEG's scans,
// with and without the scan limit.
//
// The TFRecord file (SLUICE_BENCH_TFRECORD_MIB, default 512 MiB of 100 KiB records) is written
// once into a fresh temporary directory, which is removed at exit. Compare the TFRecord and the
// plain-read figures of the same run: the machine may be shared.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/formats/crc32c.h"
#include "sluice/formats/example.h"
#include "sluice/formats/example_values.h"
#include "sluice/formats/jpeg.h"
#include "sluice/formats/proto/example.pb.h"
#include "sluice/formats/sequence_example.h"
#include "sluice/formats/tfrecord_reader.h"
#include "sluice/formats/tfrecord_writer.h"
#include "tests/formats/jpeg_writer.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

std::string random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string bytes(n, '\0');
  for (size_t i = 0; i + 8 <= n; i += 8) {
    const uint64_t v = rng();
    std::memcpy(bytes.data() + i, &v, 8);
  }
  return bytes;
}

void BM_Crc32cHardware(benchmark::State& state) {
  if (!internal::crc32c_hardware_available()) {
    state.SkipWithError("no SSE4.2 on this CPU");
    return;
  }
  const std::string data = random_bytes(static_cast<size_t>(state.range(0)), 1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(internal::crc32c_extend_hardware(0, data.data(), data.size()));
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Crc32cHardware)->Arg(1 << 20)->Arg(100 << 10)->Arg(4 << 10);

void BM_Crc32cFolding(benchmark::State& state) {
  if (!internal::crc32c_folding_available()) {
    state.SkipWithError("no VPCLMULQDQ/AVX2 on this CPU");
    return;
  }
  const std::string data = random_bytes(static_cast<size_t>(state.range(0)), 1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(internal::crc32c_extend_folding(0, data.data(), data.size()));
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Crc32cFolding)->Arg(1 << 20)->Arg(100 << 10)->Arg(4 << 10);

void BM_Crc32cPortable(benchmark::State& state) {
  const std::string data = random_bytes(static_cast<size_t>(state.range(0)), 1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(internal::crc32c_extend_portable(0, data.data(), data.size()));
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Crc32cPortable)->Arg(1 << 20);

// The TFRecord file shared by the reading benchmarks, written on first use.
class RecordFile {
 public:
  static const RecordFile& get() {
    static const RecordFile file;
    return file;
  }
  ~RecordFile() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const std::string& path() const { return path_; }
  int64_t bytes() const { return bytes_; }
  int64_t records() const { return records_; }

 private:
  RecordFile() {
    std::string pattern = (fs::temp_directory_path() / "sluice-formats-bench-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    path_ = dir_ + "/records.tfrecord";
    int64_t mib = 512;
    if (const char* env = std::getenv("SLUICE_BENCH_TFRECORD_MIB")) mib = std::atoll(env);
    constexpr size_t kRecord = 100 << 10;
    const std::string payload = random_bytes(kRecord, 2);
    TFRecordWriter writer(path_);
    for (int64_t written = 0; written < (mib << 20); written += kRecord + 16) {
      writer.write(payload);
      ++records_;
    }
    writer.close();
    bytes_ = static_cast<int64_t>(fs::file_size(path_));
  }
  std::string dir_;
  std::string path_;
  int64_t bytes_ = 0;
  int64_t records_ = 0;
};

// Every record of the file through TFRecordReader::read_view: length and payload CRCs checked.
void BM_TFRecordRead(benchmark::State& state) {
  const RecordFile& file = RecordFile::get();
  const TFRecordReaderOptions options{.buffer_size = static_cast<size_t>(state.range(0)),
                                      .read_ahead = state.range(1) != 0};
  for (auto _ : state) {
    TFRecordReader reader(file.path(), options);
    std::string_view record;
    int64_t n = 0;
    while (reader.read_view(record)) {
      benchmark::DoNotOptimize(record.data());
      ++n;
    }
    if (n != file.records()) state.SkipWithError("wrong record count");
  }
  state.SetBytesProcessed(state.iterations() * file.bytes());
  state.counters["records"] = static_cast<double>(file.records());
}
// Args: the reader's buffer size (256 KiB is the default), read-ahead thread (1) or not (0).
BENCHMARK(BM_TFRecordRead)
    ->Args({256 << 10, 0})
    ->Args({1 << 20, 0})
    ->Args({1 << 20, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same file as `cat FILE > /dev/null`: read() of 1 MiB (or 128 KiB, cat's own) blocks into a
// page-aligned buffer, as cat's, nothing checked.
void BM_PlainRead(benchmark::State& state) {
  const RecordFile& file = RecordFile::get();
  const auto size = static_cast<size_t>(state.range(0));
  const std::unique_ptr<char, decltype(&std::free)> block(
      static_cast<char*>(std::aligned_alloc(4096, size)), &std::free);
  for (auto _ : state) {
    const int fd = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
    int64_t total = 0;
    ssize_t got;
    while ((got = ::read(fd, block.get(), size)) > 0) total += got;
    ::close(fd);
    benchmark::DoNotOptimize(total);
  }
  state.SetBytesProcessed(state.iterations() * file.bytes());
}
BENCHMARK(BM_PlainRead)->Arg(1 << 20)->Arg(128 << 10)->Unit(benchmark::kMillisecond)->UseRealTime();

// A batch of image+label Examples as `records convert` writes them (a small JPEG's worth of bytes,
// format, height, width, label, text); the spec reads the image bytes and the label. The third
// argument: 1 parses the records as batch() gives them, a packed string tensor whose bytes the
// images share; 0 parses a vector of std::string, copying the images.
void BM_ParseExampleImageLabel(benchmark::State& state) {
  const int64_t batch = state.range(0);
  const size_t image_bytes = static_cast<size_t>(state.range(1));
  const bool shared = state.range(2) != 0;
  std::vector<std::string> serialized;
  for (int64_t i = 0; i < batch; ++i) {
    ExampleValues e;
    e["image/encoded"] = FeatureValues::of_bytes({random_bytes(image_bytes, 3 + i)});
    e["image/format"] = FeatureValues::of_bytes({"JPEG"});
    e["image/height"] = FeatureValues::of_ints({64});
    e["image/width"] = FeatureValues::of_ints({64});
    e["image/class/label"] = FeatureValues::of_ints({i % 10});
    e["image/class/text"] = FeatureValues::of_bytes({"class"});
    serialized.push_back(serialize_example(e));
  }
  const FeatureSpec spec{
      {"image/encoded", FixedLenFeature{Shape{}, DType::kString, std::nullopt}},
      {"image/class/label", FixedLenFeature{Shape{}, DType::kInt64, std::nullopt}},
  };
  const std::vector<std::string_view> views(serialized.begin(), serialized.end());
  const Tensor records = Tensor::from_string_views(views);
  for (auto _ : state) {
    if (shared) {
      benchmark::DoNotOptimize(parse_example(records, spec));
    } else {
      benchmark::DoNotOptimize(parse_example(serialized, spec));
    }
  }
  state.SetItemsProcessed(state.iterations() * batch);
  state.SetBytesProcessed(state.iterations() * batch * state.range(1));
}
BENCHMARK(BM_ParseExampleImageLabel)
    ->Args({1024, 2048, 0})
    ->Args({1024, 2048, 1})
    ->Args({1024, 100 << 10, 0})
    ->Args({1024, 100 << 10, 1});

// A batch of SequenceExamples of 20 to 40 steps, each a 16-float frame and one to three tokens,
// with a label in the context: the frames padded to the longest record, the tokens ragged.
void BM_ParseSequenceExample(benchmark::State& state) {
  const int64_t batch = state.range(0);
  std::mt19937_64 rng(5);
  std::vector<std::string> serialized;
  int64_t steps_total = 0;
  for (int64_t i = 0; i < batch; ++i) {
    tensorflow::SequenceExample e;
    (*e.mutable_context()->mutable_feature())["label"].mutable_int64_list()->add_value(i % 10);
    auto& lists = *e.mutable_feature_lists()->mutable_feature_list();
    const int steps = 20 + static_cast<int>(rng() % 21);
    steps_total += steps;
    for (int t = 0; t < steps; ++t) {
      auto* frame = lists["frames"].add_feature()->mutable_float_list();
      for (int k = 0; k < 16; ++k) frame->add_value(static_cast<float>(rng() % 1000) / 7.0f);
      auto* tokens = lists["tokens"].add_feature()->mutable_bytes_list();
      for (uint64_t k = 1 + rng() % 3; k > 0; --k) tokens->add_value("token" + std::to_string(k));
    }
    serialized.push_back(e.SerializeAsString());
  }
  const FeatureSpec context{{"label", FixedLenFeature{Shape{}, DType::kInt64, std::nullopt}}};
  const SequenceFeatureSpec lists{
      {"frames", FixedLenSequenceFeature{Shape{16}, DType::kFloat32}},
      {"tokens", VarLenFeature{DType::kString}},
  };
  for (auto _ : state) {
    benchmark::DoNotOptimize(parse_sequence_example(serialized, context, lists));
  }
  state.SetItemsProcessed(state.iterations() * batch);
  state.counters["steps_per_second"] = benchmark::Counter(
      static_cast<double>(state.iterations() * steps_total), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ParseSequenceExample)->Arg(256);

// The progressive-JPEG scan bomb: a flat 1024x1024 grey image whose AC scan is repeated
// range(0) times (every repeat a pass over all 16,384 blocks), decoded with the scan limit
// raised to let it through (range(1) = 0) or at the default limit (range(1) = 1), which refuses
// files of more than 100 scans before decoding. Compare the time per decode of 2000 scans
// without the limit to that of 10 scans, and to the refusal.
void BM_DecodeJpegScans(benchmark::State& state) {
  const std::string bytes = testing::many_scan_jpeg(1024, 1024, static_cast<int>(state.range(0)));
  JpegDecodeOptions options;
  if (state.range(1) == 0) options.max_scans = 1 << 20;
  bool refused = false;
  for (auto _ : state) {
    try {
      benchmark::DoNotOptimize(decode_jpeg(bytes, options, "bench.jpg"));
    } catch (const ResourceExhausted&) {
      refused = true;
    }
  }
  state.SetLabel(refused ? "refused" : "decoded");
}
BENCHMARK(BM_DecodeJpegScans)
    ->Args({10, 0})
    ->Args({2000, 0})
    ->Args({2000, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice
