// Dataset::save / load / snapshot: round trips, the format's checks, the snapshot's life cycle
// (fingerprints, interrupted and concurrent writers), zero-copy serving and saved state.
#include "sluice/dataset/snapshot.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "sluice/core/errors.h"
#include "sluice/core/file_system.h"
#include "sluice/dataset/dataset.h"
#include "sluice/formats/crc32c.h"
#include "tests/dataset/testing.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::collect;
using testing::expect_dataset;
using testing::expect_elements;
using testing::expect_resumes;
using testing::ints;
using testing::Is;

class SnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() / ("sluice_snapshot_test_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(counter.fetch_add(1)));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // The sub-folders of `folder`, by name, sorted.
  static std::vector<std::string> entries(const std::string& folder) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(folder)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
};

// Elements of several dtypes and shapes, with names, a string component among them.
Element mixed_components(int64_t n) {
  std::vector<float> f(static_cast<size_t>(n * 3 * 2));
  for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(i) * 0.5f - 3;
  std::vector<int32_t> i32(static_cast<size_t>(n * 4));
  for (size_t i = 0; i < i32.size(); ++i) i32[i] = static_cast<int32_t>(i * 7919) - 1000;
  std::vector<uint8_t> u8(static_cast<size_t>(n * 5));
  for (size_t i = 0; i < u8.size(); ++i) u8[i] = static_cast<uint8_t>(i * 31);
  std::vector<int64_t> i64(static_cast<size_t>(n));
  for (size_t i = 0; i < i64.size(); ++i) i64[i] = (int64_t{1} << 40) + static_cast<int64_t>(i);
  std::vector<std::string> s;
  for (int64_t i = 0; i < n; ++i)
    s.push_back(std::string(static_cast<size_t>(i * 3), 'a' + i % 26));
  Tensor bf(DType::kBFloat16, Shape{n, 2});
  auto* bits = static_cast<uint16_t*>(bf.raw_data());
  for (int64_t i = 0; i < n * 2; ++i) bits[i] = static_cast<uint16_t>(0x3f80 + i);
  return Element{{"f", Tensor::from_vector(f, Shape{n, 3, 2})},
                 {"i32", Tensor::from_vector(i32, Shape{n, 2, 2})},
                 {"u8", Tensor::from_vector(u8, Shape{n, 5})},
                 {"i64", Tensor::from_vector(i64)},
                 {"s", Tensor::from_strings(s)},
                 {"bf", bf}};
}

std::vector<std::string> snapshots(const std::string& path);

TEST_F(SnapshotTest, TfDocstringSaveLoad) {
  // dataset = tf.data.Dataset.range(2); dataset.save(path); tf.data.Dataset.load(path) -> 0, 1
  Dataset::range(2).save(path("saved"));
  const Dataset loaded = Dataset::load(path("saved"));
  EXPECT_EQ(loaded.cardinality(), 2);
  expect_dataset(loaded, Is({0, 1}));
}

TEST_F(SnapshotTest, EmptyDatasets) {
  Dataset::range(0).save(path("saved"));
  const Dataset loaded = Dataset::load(path("saved"));
  EXPECT_EQ(loaded.cardinality(), 0);
  expect_dataset(loaded, {});
  expect_resumes([&] { return Dataset::load(path("saved")); });
  const Dataset snap = Dataset::range(0).snapshot(path("snap"));
  expect_dataset(snap, {});
  EXPECT_EQ(snapshots(path("snap")).size(), 1u);
}

TEST_F(SnapshotTest, RoundTripsDtypesShapesAndStrings) {
  const Dataset ds = Dataset::from_tensor_slices(mixed_components(13));
  ds.save(path("saved"));
  const Dataset loaded = Dataset::load(path("saved"));
  EXPECT_EQ(loaded.cardinality(), 13);
  expect_dataset(loaded, collect(ds));
  const SnapshotMetadata m = read_snapshot_metadata(path("saved"));
  EXPECT_EQ(element_spec_string(m.spec),
            "f: float32[3, 2], i32: int32[2, 2], u8: uint8[5], i64: int64[], s: string[], "
            "bf: bfloat16[2]");
  EXPECT_EQ(m.elements(), 13u);
}

TEST_F(SnapshotTest, ShapesThatDifferBecomeUnknownInTheSpec) {
  const Dataset ds = Dataset::range(6).map([](const Tensor& x) {
    const int64_t n = x.item<int64_t>();
    return Tensor::from_vector(std::vector<int64_t>(static_cast<size_t>(n), n));
  });
  ds.save(path("saved"));
  expect_dataset(Dataset::load(path("saved")), collect(ds));
  EXPECT_EQ(element_spec_string(read_snapshot_metadata(path("saved")).spec), "int64[?]");
}

TEST_F(SnapshotTest, ElementsOfAnotherDtypeFailTheSave) {
  const Dataset ds = Dataset::range(3).map([](const Tensor& x) -> Element {
    if (x.item<int64_t>() == 2) return Element{Tensor::scalar<float>(1)};
    return Element{x};
  });
  try {
    ds.save(path("saved"));
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("element 2"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path("saved")));
  EXPECT_TRUE(entries(dir_.string()).empty());
}

TEST_F(SnapshotTest, CompressionRoundTrips) {
  const Dataset ds = Dataset::from_tensor_slices(mixed_components(9));
  for (const std::string c : {"GZIP", "ZLIB"}) {
    ds.save(path(c), c);
    expect_dataset(Dataset::load(path(c)), collect(ds));
    EXPECT_EQ(read_snapshot_metadata(path(c)).compression, parse_compression(c));
  }
  // Zeros compress: the compressed shard is much smaller than the plain one.
  const Dataset zeros =
      Dataset::range(20).map([](const Tensor&) { return Tensor(DType::kFloat32, Shape{1024}); });
  zeros.save(path("plain"));
  zeros.save(path("gz"), "GZIP");
  EXPECT_LT(fs::file_size(snapshot_shard_path(path("gz"), 0)) * 10,
            fs::file_size(snapshot_shard_path(path("plain"), 0)));
  expect_dataset(Dataset::load(path("gz")), collect(zeros));
  EXPECT_THROW(zeros.save(path("x"), "SNAPPY"), InvalidArgument);
}

TEST_F(SnapshotTest, ShardFuncSpreadsElementsOverShards) {
  Dataset::range(10).save(path("saved"), "",
                          [](const Element& e) { return e[0].item<int64_t>() % 3; });
  for (int s = 0; s < 3; ++s) EXPECT_TRUE(fs::exists(snapshot_shard_path(path("saved"), s)));
  const SnapshotMetadata m = read_snapshot_metadata(path("saved"));
  ASSERT_EQ(m.shards.size(), 3u);
  EXPECT_EQ(m.shards[0].elements, 4u);
  // Shard after shard, each in the order saved.
  expect_dataset(Dataset::load(path("saved")), Is({0, 3, 6, 9, 1, 4, 7, 2, 5, 8}));
  EXPECT_THROW(Dataset::range(3).save(path("bad"), "", [](const Element&) { return int64_t{-1}; }),
               InvalidArgument);
  EXPECT_FALSE(fs::exists(path("bad")));
}

TEST_F(SnapshotTest, SaveReplacesASavedDatasetAndRefusesOtherFolders) {
  Dataset::range(3).save(path("saved"));
  Dataset::range(5).save(path("saved"));
  EXPECT_EQ(ints(Dataset::load(path("saved"))), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  fs::create_directories(path("other"));
  std::ofstream(path("other/keep.txt")) << "mine";
  EXPECT_THROW(Dataset::range(3).save(path("other")), AlreadyExists);
  EXPECT_TRUE(fs::exists(path("other/keep.txt")));
  // A failing pipeline leaves the saved dataset as it was.
  const Dataset failing = Dataset::range(4).map([](const Tensor& x) {
    if (x.item<int64_t>() == 2) throw InvalidArgument("boom");
    return x;
  });
  EXPECT_THROW(failing.save(path("saved")), InvalidArgument);
  EXPECT_EQ(ints(Dataset::load(path("saved"))), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(entries(dir_.string()), (std::vector<std::string>{"other", "saved"}));
}

// The bytes of a file, changed by `edit`, written back.
void edit_file(const std::string& file, const std::function<void(std::string&)>& edit) {
  std::string bytes = read_whole_file(file);
  edit(bytes);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

std::string first_error(const Dataset& ds) {
  try {
    for (const Element& e : ds) (void)e;
  } catch (const DataLoss& e) {
    return e.what();
  }
  ADD_FAILURE() << "no DataLoss";
  return "";
}

TEST_F(SnapshotTest, CorruptedByteIsDataLossNamingFileAndOffset) {
  const Dataset ds = Dataset::range(10).map([](const Tensor& x) {
    return Tensor::from_vector(std::vector<float>(100, static_cast<float>(x.item<int64_t>())));
  });
  ds.save(path("saved"));
  const std::string shard = snapshot_shard_path(path("saved"), 0);
  const uint64_t size = fs::file_size(shard);
  const uint64_t record = (size - 64) / 10;  // Every record is as long.
  ASSERT_EQ(record % 64, 0u);
  const uint64_t third = 64 + 3 * record;
  // A payload byte, then a length byte.
  for (uint64_t at : {third + record - 100, third + 2}) {
    ds.save(path("saved"));
    edit_file(shard, [&](std::string& b) { b[at] ^= 0x10; });
    const std::string message = first_error(Dataset::load(path("saved")));
    EXPECT_NE(message.find(shard), std::string::npos) << message;
    EXPECT_NE(message.find("checksum mismatch at byte offset " + std::to_string(third)),
              std::string::npos)
        << message;
    // The elements before the bad record are served.
    Iterator it = Dataset::load(path("saved")).make_iterator();
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(it.next().has_value());
    EXPECT_THROW(it.next(), DataLoss);
  }
}

TEST_F(SnapshotTest, LargeRecordsAreCheckedInParts) {
  // 2 MiB records: checked a part per task when the iterator has threads.
  const Dataset ds = Dataset::range(3).map([](const Tensor& x) {
    std::vector<float> v(size_t{1} << 19);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000) + x.item<int64_t>();
    return Tensor::from_vector(v);
  });
  ds.save(path("saved"));
  expect_dataset(Dataset::load(path("saved")), collect(ds));
  const std::string shard = snapshot_shard_path(path("saved"), 0);
  const uint64_t record = (fs::file_size(shard) - 64) / 3;
  // A byte near the end of the second record, in its last part.
  edit_file(shard, [&](std::string& b) { b[64 + 2 * record - 200] ^= 1; });
  for (int n : {1, 2, 8}) {
    std::string message;
    try {
      collect(Dataset::load(path("saved")), testing::threads(n));
    } catch (const DataLoss& e) {
      message = e.what();
    }
    EXPECT_NE(message.find("checksum mismatch at byte offset " + std::to_string(64 + record)),
              std::string::npos)
        << "threads=" << n << ": " << message;
  }
}

// Reads the snapshot in `folder` from element `from` to its end; returns how many record bodies
// the reader checked and the first element's first float.
std::pair<int, float> read_counting_checks(const std::string& folder, uint64_t from = 0) {
  SnapshotPosition start;
  if (from > 0) {
    SnapshotReader skipping(folder);
    for (uint64_t i = 0; i < from; ++i) skipping.next();
    start = skipping.position();
  }
  SnapshotReader reader(folder);
  int checks = 0;
  reader.set_checksum([&checks](std::string_view body) {
    ++checks;
    return crc32c(body);
  });
  if (from > 0) reader.seek(start);
  std::optional<Element> e = reader.next();
  const float first = e ? (*e)[0].data<float>()[0] : -1;
  while (e) e = reader.next();
  return {checks, first};
}

TEST_F(SnapshotTest, RecordsAreCheckedOncePerProcessWhileTheFileStaysAsItWas) {
  const Dataset ds = Dataset::range(10).map([](const Tensor& x) {
    return Tensor::from_vector(std::vector<float>(100, static_cast<float>(x.item<int64_t>())));
  });
  ds.save(path("saved"));
  ds.save(path("sharded"), "", [](const Element& e) { return e[0].data<float>()[0] >= 5 ? 1 : 0; });
  // A file changed within the last second may change again within its timestamp's tick, unseen:
  // it is checked on every read.
  EXPECT_EQ(read_counting_checks(path("saved")).first, 10);
  EXPECT_EQ(read_counting_checks(path("saved")).first, 10);

  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_EQ(read_counting_checks(path("saved")).first, 10);
  EXPECT_EQ(read_counting_checks(path("saved")).first, 0) << "checked again, unchanged";
  // A reader that starts mid-shard does not know the records' indices for certain: it checks.
  EXPECT_EQ(read_counting_checks(path("saved"), 6), std::make_pair(4, 6.f));
  // So does one that leaves a checked shard for the middle of another.
  EXPECT_EQ(read_counting_checks(path("sharded")).first, 10);
  SnapshotReader skipping(path("sharded"));
  for (int i = 0; i < 7; ++i) skipping.next();  // Shard 0 holds 0-4: this is shard 1's third.
  int checks = 0;
  SnapshotReader jumping(path("sharded"));
  jumping.set_checksum([&checks](std::string_view body) {
    ++checks;
    return crc32c(body);
  });
  for (int i = 0; i < 2; ++i) jumping.next();
  EXPECT_EQ(checks, 0) << "shard 0 read again";
  jumping.seek(skipping.position());
  EXPECT_EQ((*jumping.next())[0].data<float>()[0], 7.f);
  while (jumping.next()) {
  }
  EXPECT_EQ(checks, 3);

  // Changed in place, same inode and size: checked anew, and the change is found.
  const std::string shard = snapshot_shard_path(path("saved"), 0);
  const uint64_t record = (fs::file_size(shard) - 64) / 10;
  edit_file(shard, [&](std::string& b) { b[64 + 4 * record + 100] ^= 1; });
  const std::string message = first_error(Dataset::load(path("saved")));
  EXPECT_NE(message.find("checksum mismatch at byte offset " + std::to_string(64 + 4 * record)),
            std::string::npos)
      << message;
}

TEST_F(SnapshotTest, TruncatedShardIsDataLoss) {
  Dataset::range(10).save(path("saved"));
  const std::string shard = snapshot_shard_path(path("saved"), 0);
  const uint64_t size = fs::file_size(shard);
  fs::resize_file(shard, size - 70);
  const std::string message = first_error(Dataset::load(path("saved")));
  EXPECT_NE(message.find(shard), std::string::npos) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  EXPECT_NE(message.find("byte offset " + std::to_string(size - 70)), std::string::npos) << message;
}

TEST_F(SnapshotTest, MissingOrCorruptMetadata) {
  EXPECT_THROW(Dataset::load(path("nothing")), NotFound);
  Dataset::range(4).save(path("saved"));
  const std::string metadata = path("saved") + "/" + kSnapshotMetadataName;
  edit_file(metadata, [](std::string& b) { b[b.size() - 3] ^= 1; });
  try {
    Dataset::load(path("saved"));
    FAIL() << "no error";
  } catch (const DataLoss& e) {
    EXPECT_NE(std::string(e.what()).find(metadata), std::string::npos) << e.what();
  }
  fs::remove(metadata);
  try {
    Dataset::load(path("saved"));
    FAIL() << "no error";
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find(metadata), std::string::npos) << e.what();
  }
  // A folder without metadata is no saved dataset that save would replace.
  EXPECT_THROW(Dataset::range(4).save(path("saved")), AlreadyExists);
  fs::remove_all(path("saved"));
  Dataset::range(4).save(path("saved"));
  fs::remove(snapshot_shard_path(path("saved"), 0));
  EXPECT_THROW(collect(Dataset::load(path("saved"))), NotFound);
}

// The snapshot folders (not the staging ones) under `path`.
std::vector<std::string> snapshots(const std::string& path) {
  std::vector<std::string> out;
  if (!fs::exists(path)) return out;
  for (const auto& e : fs::directory_iterator(path)) {
    const std::string name = e.path().filename();
    if (!name.starts_with(".")) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(SnapshotTest, TfDocstringSnapshot) {
  // dataset = tf.data.Dataset.range(5).snapshot(path): the elements, pass after pass.
  const Dataset ds = Dataset::range(5).snapshot(path("snap"));
  EXPECT_EQ(ds.cardinality(), 5);
  expect_dataset(ds, Is({0, 1, 2, 3, 4}));
  expect_dataset(ds.repeat(2), Is({0, 1, 2, 3, 4, 0, 1, 2, 3, 4}));
  EXPECT_EQ(snapshots(path("snap")).size(), 1u);
}

TEST_F(SnapshotTest, FirstPassWritesLaterPassesRead) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  const auto make = [&] {
    return Dataset::range(10)
        .map([calls](const Tensor& x) {
          ++*calls;
          return Tensor::scalar<int64_t>(x.item<int64_t>() * 3);
        })
        .snapshot(path("snap"));
  };
  const Dataset ds = make();
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < 10; ++i) expected.push_back(i * 3);
  EXPECT_EQ(ints(ds), expected);
  EXPECT_EQ(*calls, 10);
  const std::vector<std::string> folders = snapshots(path("snap"));
  ASSERT_EQ(folders.size(), 1u);
  EXPECT_EQ(entries(path("snap")).size(), 1u) << "a staging folder was left";
  EXPECT_EQ(ints(ds), expected);
  EXPECT_EQ(ints(ds.repeat(3)).size(), 30u);
  EXPECT_EQ(*calls, 10) << "later passes read the snapshot";
  // A new pipeline object (as a new process makes) pulls one element to learn the spec.
  EXPECT_EQ(ints(make()), expected);
  EXPECT_EQ(*calls, 11);
  EXPECT_EQ(snapshots(path("snap")), folders);
  // The snapshot is a saved dataset, with the pipeline's fingerprint.
  const SnapshotMetadata m = read_snapshot_metadata(path("snap") + "/" + folders[0]);
  EXPECT_EQ(snapshot_folder(path("snap"), m.fingerprint), path("snap") + "/" + folders[0]);
  EXPECT_EQ(ints(Dataset::load(path("snap") + "/" + folders[0])), expected);
}

TEST_F(SnapshotTest, ChangedPipelineWritesANewSnapshot) {
  const auto run = [&](const Dataset& ds) { return collect(ds.snapshot(path("snap"))); };
  run(Dataset::range(10));
  EXPECT_EQ(snapshots(path("snap")).size(), 1u);
  run(Dataset::range(10));
  EXPECT_EQ(snapshots(path("snap")).size(), 1u);
  run(Dataset::range(12));  // A parameter.
  EXPECT_EQ(snapshots(path("snap")).size(), 2u);
  run(Dataset::range(10).batch(2));  // A stage.
  EXPECT_EQ(snapshots(path("snap")).size(), 3u);
  // A function that changes the dtype, which the plan alone does not show.
  const auto as_float = [](const Tensor& x) {
    return Tensor::scalar<float>(static_cast<float>(x.item<int64_t>()));
  };
  const auto as_int = [](const Tensor& x) { return x; };
  run(Dataset::range(10).map(as_int));
  EXPECT_EQ(snapshots(path("snap")).size(), 4u);
  const std::vector<Element> floats = run(Dataset::range(10).map(as_float));
  EXPECT_EQ(snapshots(path("snap")).size(), 5u);
  ASSERT_EQ(floats.size(), 10u);
  EXPECT_EQ(floats[3][0].item<float>(), 3.f);
  // The compression does not change the fingerprint.
  collect(Dataset::range(10).snapshot(path("snap"), "GZIP"));
  EXPECT_EQ(snapshots(path("snap")).size(), 5u);
}

TEST_F(SnapshotTest, InterruptedFirstPassLeavesNothingTrustedAndTheNextRunWrites) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  const Dataset ds = Dataset::range(10)
                         .map([calls](const Tensor& x) {
                           ++*calls;
                           return x;
                         })
                         .snapshot(path("snap"));
  {
    Iterator it = ds.make_iterator();
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(it.next().has_value());
  }
  EXPECT_TRUE(entries(path("snap")).empty());
  // A crashed writer's folder, complete but for the rename, is not trusted.
  ASSERT_TRUE(fs::exists(path("snap")));
  Dataset::range(10).save(path("snap/.crashed.writing-1-0"));
  *calls = 0;
  EXPECT_EQ(ints(ds), testing::range_vector(10));
  EXPECT_EQ(*calls, 10) << "the next run writes the snapshot";
  EXPECT_EQ(snapshots(path("snap")).size(), 1u);
  EXPECT_EQ(ints(ds), testing::range_vector(10));
  EXPECT_EQ(*calls, 10);
}

TEST_F(SnapshotTest, TwoWritersAtOnceLeaveOneWholeSnapshot) {
  const Dataset ds = Dataset::range(20).snapshot(path("snap"));
  Iterator a = ds.make_iterator();
  Iterator b = ds.make_iterator();
  std::vector<int64_t> got_a, got_b;
  for (;;) {
    auto x = a.next();
    auto y = b.next();
    if (x) got_a.push_back((*x)[0].item<int64_t>());
    if (y) got_b.push_back((*y)[0].item<int64_t>());
    if (!x && !y) break;
  }
  EXPECT_EQ(got_a, testing::range_vector(20));
  EXPECT_EQ(got_b, testing::range_vector(20));
  EXPECT_EQ(entries(path("snap")).size(), 1u) << "the loser's folder was left";
  EXPECT_EQ(ints(ds), testing::range_vector(20));
}

TEST_F(SnapshotTest, CompressedSnapshotWritesAndReads) {
  const Dataset source = Dataset::from_tensor_slices(mixed_components(6));
  const Dataset ds = source.snapshot(path("snap"), "ZLIB");
  const std::vector<Element> expected = collect(source);
  expect_elements(collect(ds), expected, "writing pass");
  const std::vector<std::string> folders = snapshots(path("snap"));
  ASSERT_EQ(folders.size(), 1u);
  EXPECT_EQ(read_snapshot_metadata(path("snap") + "/" + folders[0]).compression,
            Compression::kZlib);
  expect_elements(collect(ds), expected, "reading pass");
  EXPECT_THROW(Dataset::range(3).snapshot(path("x"), "LZ4"), InvalidArgument);
}

TEST_F(SnapshotTest, ErrorsArePassedOnAndNotRecorded) {
  const Dataset ds = Dataset::range(5)
                         .map([](const Tensor& x) {
                           if (x.item<int64_t>() == 2) throw InvalidArgument("bad two");
                           return x;
                         })
                         .snapshot(path("snap"))
                         .ignore_errors();
  EXPECT_EQ(ints(ds), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(ints(ds), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(snapshots(path("snap")).size(), 1u);
}

// The address range of the mapping of `file` in this process, from /proc/self/maps.
std::vector<std::pair<uintptr_t, uintptr_t>> mappings_of(const std::string& file) {
  std::vector<std::pair<uintptr_t, uintptr_t>> out;
  std::ifstream maps("/proc/self/maps");
  const std::string canonical = fs::canonical(file).string();
  for (std::string line; std::getline(maps, line);) {
    if (!line.ends_with(canonical)) continue;
    std::istringstream in(line);
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    in >> std::hex >> begin >> dash >> end;
    out.emplace_back(begin, end);
  }
  return out;
}

TEST_F(SnapshotTest, TensorsPointIntoTheMapping) {
  const Dataset ds = Dataset::range(8).map([](const Tensor& x) {
    return Element{{"image", Tensor::from_vector(
                                 std::vector<float>(300, static_cast<float>(x.item<int64_t>())))},
                   {"label", x}};
  });
  ds.save(path("saved"));
  const std::string shard = snapshot_shard_path(path("saved"), 0);
  std::vector<Element> held;
  {
    Iterator it = Dataset::load(path("saved")).make_iterator();
    while (auto e = it.next()) held.push_back(std::move(*e));
  }
  // The iterator is gone; the tensors keep the mapping alive and point into it.
  const auto ranges = mappings_of(shard);
  ASSERT_FALSE(ranges.empty()) << "the shard is not mapped";
  for (size_t i = 0; i < held.size(); ++i) {
    const auto p = reinterpret_cast<uintptr_t>(held[i]["image"].raw_data());
    EXPECT_EQ(p % 64, 0u) << "element " << i;
    EXPECT_TRUE(std::any_of(ranges.begin(), ranges.end(),
                            [&](const auto& r) { return p >= r.first && p + 1200 <= r.second; }))
        << "element " << i << " was copied";
    EXPECT_EQ(held[i]["image"].data<float>()[299], static_cast<float>(i));
  }
  expect_elements(held, collect(ds), "held");
  held.clear();
  EXPECT_TRUE(mappings_of(shard).empty()) << "the mapping outlived its tensors";

  // The reader's own view of it.
  SnapshotReader reader(path("saved"));
  const std::optional<Element> e = reader.next();
  ASSERT_TRUE(e.has_value());
  ASSERT_NE(reader.mapped_shard(), nullptr);
  EXPECT_TRUE(reader.mapped_shard()->contains((*e)["image"].raw_data(), 1200));
  // A write through the tensor stays private to this process' mapping.
  Tensor image = (*e)["image"];
  image.data<float>()[0] = 42;
  EXPECT_EQ(ints(Dataset::load(path("saved")).map([](const Element& x) { return x["label"]; })),
            testing::range_vector(8));
  EXPECT_EQ(collect(Dataset::load(path("saved")))[0]["image"].data<float>()[0], 0.f);
}

TEST_F(SnapshotTest, HeapStaysFlatWhileHoldingAllOfALargeSnapshot) {
  constexpr int64_t kElements = 200;
  constexpr int64_t kFloats = 16 << 10;  // 64 KiB each, 12.8 MB in all.
  Dataset::range(kElements)
      .map([](const Tensor& x) {
        return Tensor::from_vector(std::vector<float>(static_cast<size_t>(kFloats),
                                                      static_cast<float>(x.item<int64_t>())));
      })
      .save(path("big"));
  const Dataset served = Dataset::load(path("big"));
  std::vector<Tensor> held;
  held.reserve(kElements);
  Iterator it = served.make_iterator();
  held.push_back((*it.next())[0]);
  const size_t before = mallinfo2().uordblks;
  size_t peak = before;
  while (auto e = it.next()) {
    held.push_back((*e)[0]);
    peak = std::max(peak, mallinfo2().uordblks);
  }
  ASSERT_EQ(held.size(), static_cast<size_t>(kElements));
  EXPECT_EQ(held.back().data<float>()[kFloats - 1], static_cast<float>(kElements - 1));
  // Copies would take 12.8 MB; references into the mapping a few hundred bytes each.
  EXPECT_LT(peak - before, size_t{1} << 20) << "the heap grew with the snapshot";
}

TEST_F(SnapshotTest, LoadResumes) {
  Dataset::from_tensor_slices(mixed_components(7)).save(path("saved"), "", [](const Element& e) {
    return e["i64"].item<int64_t>() % 2;
  });
  expect_resumes([&] { return Dataset::load(path("saved")); });
  Dataset::range(9).save(path("gz"), "GZIP");
  expect_resumes([&] { return Dataset::load(path("gz")).batch(2); });
}

TEST_F(SnapshotTest, SnapshotReadingResumes) {
  const auto make = [&] { return Dataset::range(11).snapshot(path("snap")).repeat(2); };
  collect(make());  // Written.
  expect_resumes(make);
}

TEST_F(SnapshotTest, SnapshotWritingResumes) {
  // Every iterator writes: the snapshot a previous one wrote is removed first.
  expect_resumes([&] {
    fs::remove_all(path("w"));
    return Dataset::range(9).map([](const Tensor& x) { return x; }).snapshot(path("w"));
  });
}

TEST_F(SnapshotTest, RestoredWritingPassWritesNothingAndTheNextPassWrites) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  const auto make = [&] {
    return Dataset::range(10)
        .map([calls](const Tensor& x) {
          ++*calls;
          return x;
        })
        .snapshot(path("snap"));
  };
  std::string state;
  {
    Iterator it = make().make_iterator();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(it.next().has_value());
    state = it.save();
  }
  Iterator restored = make().make_iterator();
  restored.restore(state);
  std::vector<int64_t> rest;
  while (auto e = restored.next()) rest.push_back((*e)[0].item<int64_t>());
  EXPECT_EQ(rest, (std::vector<int64_t>{3, 4, 5, 6, 7, 8, 9}));
  EXPECT_TRUE(entries(path("snap")).empty()) << "a restored writing pass wrote a snapshot";
  const Dataset ds = make();
  EXPECT_EQ(ints(ds), testing::range_vector(10));
  EXPECT_EQ(snapshots(path("snap")).size(), 1u);
  const int after_write = *calls;
  EXPECT_EQ(ints(ds), testing::range_vector(10));
  EXPECT_EQ(*calls, after_write);
}

TEST_F(SnapshotTest, RestoreRefusesAVanishedSnapshot) {
  const Dataset ds = Dataset::range(10).snapshot(path("snap"));
  collect(ds);
  Iterator it = ds.make_iterator();
  it.next();
  const std::string state = it.save();
  fs::remove_all(path("snap"));
  Iterator restored = Dataset::range(10).snapshot(path("snap")).make_iterator();
  EXPECT_THROW(restored.restore(state), FailedPrecondition);
}

}  // namespace
}  // namespace sluice
