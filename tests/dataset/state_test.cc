// Iterator state: every stage and the tutorial pipelines pass the checkpoint conformance (take k,
// save, restore into a fresh iterator, read on: a straight run's outputs), and bad states are
// refused with the error that names what is wrong. One file, about 740 lines, so every stage's
// case shares the conformance helpers and the data the suite writes once.
#include <gtest/gtest.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/dataset/archive_dataset.h"
#include "sluice/dataset/dataset.h"
#include "sluice/dataset/idx_dataset.h"
#include "sluice/dataset/image_data_generator.h"
#include "sluice/dataset/image_folder.h"
#include "sluice/dataset/list_files.h"
#include "sluice/dataset/tfrecord_dataset.h"
#include "sluice/formats/idx.h"
#include "sluice/formats/png.h"
#include "sluice/formats/tfrecord_writer.h"
#include "sluice/ops/convert.h"
#include "sluice/ops/image_codec.h"
#include "sluice/ops/resize.h"
#include "tests/dataset/testing.h"
#include "tests/formats/archive_writer.h"
#include "tests/formats/testing.h"

namespace sluice {
namespace {

using testing::error_of;
using testing::expect_resumes;

// An element's value plus a number drawn from the element's generator: a map whose output
// depends on its seed, its pass and the element's index, as an augmentation does.
Element noisy(Element e, const ElementContext& ctx) {
  Random random = ctx.random();
  return Element{Tensor::scalar<int64_t>(e[0].item<int64_t>() * 1000 + random.uniform_int(1000))};
}

std::string state_after(const Dataset& ds, size_t k) {
  Iterator it = ds.make_iterator();
  for (size_t i = 0; i < k; ++i) it.next();
  return it.save();
}

TEST(StateTest, Range) {
  expect_resumes([] { return Dataset::range(3, 60, 4); });
  expect_resumes([] { return Dataset::range(10, -10, -3); });
}

TEST(StateTest, FromTensorsAndSlices) {
  expect_resumes([] { return Dataset::from_tensors(Element{{"x", Tensor::scalar(1.5f)}}); });
  expect_resumes([] {
    return Dataset::from_tensor_slices(Element{
        {"name", Tensor::from_strings({"a", "bb", "ccc", "", "eeeee"})},
        {"value", Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Shape{5, 2})}});
  });
}

TEST(StateTest, ZipAndConcatenate) {
  expect_resumes([] {
    return Dataset::zip({Dataset::range(30), Dataset::range(100, 125).map(noisy, {.seed = 3})});
  });
  expect_resumes([] { return Dataset::range(10).concatenate(Dataset::range(100, 113)); });
}

TEST(StateTest, MapSequentialAndParallel) {
  for (int64_t calls : {int64_t{0}, int64_t{3}, kAutotune}) {
    expect_resumes([calls] {
      return Dataset::range(70).map(noisy, {.num_parallel_calls = calls, .seed = 11});
    });
  }
  // Adjacent maps fuse into one stage of two functions, each with its own seed.
  expect_resumes([] {
    return Dataset::range(40)
        .map(noisy, {.num_parallel_calls = 2})
        .map(noisy, {.num_parallel_calls = 2});
  });
}

TEST(StateTest, MapAndBatch) {
  for (bool drop : {false, true}) {
    expect_resumes([drop] {
      return Dataset::range(53).map_and_batch(noisy, 8, drop, {.num_parallel_calls = 3});
    });
    // Fused by the optimizer from a parallel map and a batch, a prefetch folded in.
    expect_resumes([drop] {
      return Dataset::range(53)
          .map(noisy, {.num_parallel_calls = kAutotune})
          .batch(8, drop)
          .prefetch(2);
    });
  }
}

TEST(StateTest, MapAndBatchOfCheapElementsResumesInsideTasksOfManyBatches) {
  // Cheap elements: after the first, a task holds hundreds of batches; the saves fall inside them.
  for (bool drop : {false, true}) {
    expect_resumes(
        [drop] {
          return Dataset::range(20007).map_and_batch(noisy, 10, drop, {.num_parallel_calls = 2});
        },
        {}, {0, 1, 7, 455, 1233, 2001});
  }
}

TEST(StateTest, Filter) {
  expect_resumes([] {
    return Dataset::range(80).filter([](const Tensor& x) { return x.item<int64_t>() % 3 != 1; });
  });
  expect_resumes([] {
    return Dataset::range(80).filter([](const Element& e, const ElementContext& ctx) {
      return (e[0].item<int64_t>() + ctx.index) % 4 != 0;
    });
  });
}

TEST(StateTest, BatchPaddedBatchAndUnbatch) {
  expect_resumes([] { return Dataset::range(23).batch(5); });
  expect_resumes([] { return Dataset::range(23).batch(5, /*drop_remainder=*/true); });
  expect_resumes([] {
    return Dataset::range(1, 12)
        .map([](const Tensor& x) {
          return Tensor::from_vector(
              std::vector<int64_t>(static_cast<size_t>(x.item<int64_t>()), 7));
        })
        .padded_batch(3);
  });
  expect_resumes([] { return Dataset::range(23).batch(5).unbatch(); });
  expect_resumes(
      [] { return Dataset::range(23).batch(5).map(noisy, {.seed = 2}).unbatch().batch(3); });
}

TEST(StateTest, Shuffle) {
  expect_resumes([] { return Dataset::range(50).shuffle(16, 5); });
  expect_resumes([] { return Dataset::range(50).shuffle(100, 5); });
  // Over a map the buffer holds elements; over range or from_tensor_slices, indices.
  expect_resumes([] { return Dataset::range(50).map(noisy, {.seed = 1}).shuffle(16, 5); });
  // Each epoch a new order: the restored iterator must draw the saved epoch's and the later ones.
  Options unfused;
  unfused.static_optimizations = false;
  expect_resumes([] { return Dataset::range(20).shuffle(8, 5).repeat(3); }, unfused);
  expect_resumes([] { return Dataset::range(20).shuffle(8, 5, false).repeat(3); });
  // Without a seed of its own the stage's seed comes from Options::seed.
  expect_resumes([] { return Dataset::range(20).shuffle(8).repeat(2); }, unfused);
}

// A shuffle over a source whose elements are a function of their index keeps indices: the same
// order as over the elements, and a state of indices, not of the elements it buffers.
TEST(StateTest, ShuffleOverASliceableSourceSavesIndices) {
  const Tensor images(DType::kUInt8, Shape{3000, 28, 28});
  auto elements = [&images](bool indexable) {
    Dataset source = Dataset::from_tensor_slices(Element{images});
    if (!indexable) source = source.map([](Element e) { return e; });
    return source;
  };
  for (bool repeat : {false, true}) {
    auto make = [&](bool indexable) {
      Dataset ds = elements(indexable).shuffle(3000, 4);
      return repeat ? ds.repeat(2) : ds;
    };
    EXPECT_EQ(testing::collect_keys(make(true)), testing::collect_keys(make(false)));
    // Batched, so that no elements wait in the iterator itself (it saves the up to 63 elements
    // the last stage handed it at once and it has not given out).
    const size_t indexed = state_after(make(true).batch(100), 1).size();
    const size_t buffered = state_after(make(false).batch(100), 1).size();
    EXPECT_GT(buffered, size_t{2900} * 28 * 28) << "the buffered elements";
    EXPECT_LT(indexed, size_t{3000} * 5) << "four bytes an index";
  }
}

TEST(StateTest, ShuffleAndRepeat) {
  expect_resumes([] { return Dataset::range(25).shuffle_and_repeat(10, 3, 9); });
  expect_resumes([] { return Dataset::range(5).shuffle_and_repeat(10, 4, 9); });
  // Fused from shuffle().repeat().
  expect_resumes([] { return Dataset::range(20).shuffle(8, 5).repeat(3); });
  expect_resumes([] { return Dataset::range(12).shuffle_and_repeat(4, -1, 9).take(40); });
}

TEST(StateTest, Repeat) {
  expect_resumes([] { return Dataset::range(7).repeat(3); });
  // Each epoch re-runs the map with fresh randomness.
  expect_resumes([] { return Dataset::range(9).map(noisy, {.num_parallel_calls = 2}).repeat(3); });
  expect_resumes([] { return Dataset::range(5).repeat().take(23); });
}

// A stage that draws anew each pass, below a stage that stops reading it (a finished take, a
// concatenate past it, an ended zip): its pass is saved even so, and the epochs after a restore
// draw what a straight run draws.
TEST(StateTest, PassesResumeBelowStagesThatNoLongerReadThem) {
  Options unfused;
  unfused.static_optimizations = false;
  const std::vector<size_t> ks = {3, 7, 10, 15};
  expect_resumes([] { return Dataset::range(10).shuffle(10, 9).take(7).repeat(3); }, unfused, ks);
  expect_resumes([] { return Dataset::range(10).map(noisy, {.seed = 3}).take(7).repeat(3); },
                 unfused, ks);
  expect_resumes([] { return Dataset::random(4, true).take(7).repeat(3); }, unfused, ks);
  expect_resumes(
      [] { return Dataset::range(4).shuffle(4, 2).concatenate(Dataset::range(3)).repeat(3); },
      unfused, ks);
  expect_resumes(
      [] {
        return Dataset::zip({Dataset::range(3).shuffle(3, 1), Dataset::range(5)}).repeat(3);
      },
      unfused, {2, 4, 7});
}

TEST(StateTest, Prefetch) {
  expect_resumes([] { return Dataset::range(60).prefetch(3); });
  expect_resumes([] {
    return Dataset::range(60).map(noisy, {.num_parallel_calls = kAutotune}).prefetch(kAutotune);
  });
  expect_resumes([] { return Dataset::range(60).batch(4).prefetch(1).unbatch().prefetch(2); });
}

// The buffer_limit of the prefetch stage in `it`'s statistics.
int64_t prefetch_buffer_limit(const Iterator& it) {
  for (const StageStatsSnapshot& s : it.stats()) {
    if (s.name == "prefetch") return s.buffer_limit;
  }
  return -1;
}

// A tuned AUTOTUNE buffer is part of the position: the restored iterator starts at that size,
// where a fresh one starts at 16, and still continues with the straight run's elements.
TEST(StateTest, AutotunedPrefetchKeepsItsTunedSize) {
  const auto dataset = [] {
    return Dataset::range(100000)
        .map(
            [](Element e) {
              std::this_thread::sleep_for(std::chrono::microseconds(300));
              return e;
            },
            {.num_parallel_calls = 1})
        .prefetch(kAutotune);
  };
  Iterator it = dataset().make_iterator(Options{.threads = 2});
  ASSERT_TRUE(it.next());
  const int64_t start = prefetch_buffer_limit(it);
  EXPECT_EQ(start, 16);
  // A consumer that lets the buffer fill, then drains it faster than it refills, starves while
  // the buffer was full: the tuner doubles it. Bursts until it has grown twice.
  for (int burst = 0; burst < 20 && prefetch_buffer_limit(it) < 4 * start; ++burst) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (int64_t i = 0; i < 2 * prefetch_buffer_limit(it); ++i) ASSERT_TRUE(it.next());
  }
  const int64_t tuned = prefetch_buffer_limit(it);
  ASSERT_GE(tuned, 4 * start) << "the tuner never grew the buffer";
  const std::string state = it.save();
  Iterator restored = dataset().make_iterator(Options{.threads = 2});
  restored.restore(state);
  EXPECT_EQ(prefetch_buffer_limit(restored), tuned);
  for (int64_t i = 0; i < 50; ++i) {
    const auto a = it.next(), b = restored.next();
    ASSERT_TRUE(a && b);
    EXPECT_EQ((*b)[0].item<int64_t>(), (*a)[0].item<int64_t>());
  }
}

TEST(StateTest, MemoryCache) {
  expect_resumes([] { return Dataset::range(15).map(noisy, {.seed = 1}).cache().repeat(3); });
  expect_resumes([] { return Dataset::range(15).cache().shuffle(6, 2).repeat(2); });
}

TEST(StateTest, TakeSkipShardEnumerate) {
  expect_resumes([] { return Dataset::range(40).take(17); });
  expect_resumes([] { return Dataset::range(40).skip(11); });
  expect_resumes([] { return Dataset::range(40).shard(3, 1); });
  expect_resumes([] { return Dataset::range(40).enumerate(5).skip(3).take(30); });
}

Dataset failing_every_seventh(int64_t calls) {
  return Dataset::range(60).map(
      [](const Tensor& x) {
        if (x.item<int64_t>() % 7 == 3) throw InvalidArgument("bad " + x.debug_string());
        return x;
      },
      {.num_parallel_calls = calls});
}

TEST(StateTest, ErrorsKeepTheirPlaceAndType) {
  for (int64_t calls : {int64_t{0}, int64_t{2}}) {
    expect_resumes([calls] { return failing_every_seventh(calls).prefetch(4); });
    expect_resumes([calls] { return failing_every_seventh(calls).ignore_errors(); });
    expect_resumes([calls] { return failing_every_seventh(calls).batch(4); });
  }
  // An error saved in a buffer comes back as the same type.
  Iterator it = failing_every_seventh(2).prefetch(10).make_iterator();
  it.next();
  Iterator restored = failing_every_seventh(2).prefetch(10).make_iterator();
  restored.restore(it.save());
  restored.next();
  restored.next();
  EXPECT_THROW(restored.next(), InvalidArgument);
}

TEST(StateTest, Interleave) {
  for (int64_t calls : {int64_t{0}, int64_t{2}}) {
    expect_resumes([calls] {
      return Dataset::range(5).interleave(
          [](const Tensor& x) {
            const int64_t v = x.item<int64_t>();
            return Dataset::range(v * 100, v * 100 + 3 + v).map(noisy, {.seed = 4});
          },
          {.cycle_length = 2, .block_length = 2, .num_parallel_calls = calls});
    });
  }
}

// A training run may resume on a machine of another size: parallelism changes nothing but
// interleave's AUTOTUNE cycle, which is refused naming the thread budget.
TEST(StateTest, AStateRestoresUnderAnotherThreadBudget) {
  auto make = [] {
    return Dataset::range(200)
        .shuffle(50, 1)
        .map(noisy, {.num_parallel_calls = kAutotune, .seed = 2})
        .batch(8)
        .prefetch(kAutotune);
  };
  const std::vector<std::string> straight = testing::collect_keys(make(), testing::threads(2));
  Iterator it = make().make_iterator(testing::threads(8));
  std::vector<std::string> got = testing::outputs(it, 7);
  const std::string state = it.save();
  Iterator restored = make().make_iterator(testing::threads(1));
  restored.restore(state);
  const std::vector<std::string> rest = testing::outputs(restored);
  got.insert(got.end(), rest.begin(), rest.end());
  EXPECT_EQ(testing::first_difference(got, straight), "");

  auto interleaved = [] {
    return Dataset::range(6).interleave(
        [](const Tensor& x) { return Dataset::range(x.item<int64_t>()); });
  };
  Iterator four = interleaved().make_iterator(testing::threads(4));
  four.next();
  const std::string autotuned = four.save();
  Iterator other = interleaved().make_iterator(testing::threads(1));
  const std::string message = error_of<InvalidArgument>([&] { other.restore(autotuned); });
  EXPECT_NE(message.find("Options::threads"), std::string::npos) << message;
}

TEST(StateTest, WithOptions) {
  expect_resumes([] {
    return Dataset::range(30)
        .map(noisy, {.num_parallel_calls = 2})
        .with_options(testing::threads(3));
  });
}

// A generator over [0, n) that says where it is.
Dataset counting_generator(int64_t n) {
  return Dataset::from_generator([n] {
    auto next = std::make_shared<int64_t>(0);
    return StatefulGenerator{
        [next, n]() -> std::optional<Element> {
          if (*next == n) return std::nullopt;
          return testing::I((*next)++);
        },
        [next] { return std::to_string(*next); },
        [next](std::string_view state) { *next = std::stoll(std::string(state)); }};
  });
}

TEST(StateTest, GeneratorWithStateResumes) {
  EXPECT_TRUE(counting_generator(5).is_checkpointable());
  expect_resumes([] { return counting_generator(25).map(noisy, {.num_parallel_calls = 2}); });
}

TEST(StateTest, GeneratorWithoutStateIsUnimplementedNamingTheStage) {
  auto ds = Dataset::from_generator([] {
              auto next = std::make_shared<int64_t>(0);
              return [next]() -> std::optional<Element> { return testing::I((*next)++); };
            })
                .map(noisy)
                .batch(2);
  EXPECT_FALSE(ds.is_checkpointable());
  EXPECT_TRUE(Dataset::range(3).map(noisy).batch(2).is_checkpointable());
  Iterator it = ds.make_iterator();
  it.next();
  const std::string message = error_of<Unimplemented>([&] { it.save(); });
  EXPECT_NE(message.find("from_generator"), std::string::npos) << message;
  EXPECT_NE(message.find("batch/0:map/0:from_generator"), std::string::npos) << message;
  // The iterator is unharmed.
  EXPECT_TRUE(it.next().has_value());
}

TEST(StateTest, UnorderedStagesLoseAndRepeatNothing) {
  Options unordered;
  unordered.deterministic = false;
  expect_resumes([] { return Dataset::range(90).map(noisy, {.num_parallel_calls = 4, .seed = 1}); },
                 unordered);
  expect_resumes(
      [] {
        return Dataset::range(90)
            .shuffle(20, 3)
            .map(noisy, {.num_parallel_calls = kAutotune})
            .batch(7)
            .prefetch(kAutotune);
      },
      unordered);
  expect_resumes(
      [] {
        return Dataset::range(6).interleave(
            [](const Tensor& x) {
              return Dataset::range(x.item<int64_t>() * 10, x.item<int64_t>() * 10 + 6);
            },
            {.cycle_length = 3, .num_parallel_calls = 3});
      },
      unordered);
}

// --- Sources over files, and the tutorial pipelines -------------------------------------------

Tensor gradient(int64_t h, int64_t w, int64_t c, int seed) {
  Tensor t(DType::kUInt8, Shape{h, w, c});
  int i = 0;
  for (uint8_t& v : t.values<uint8_t>()) v = static_cast<uint8_t>(seed * 37 + i++ * 5);
  return t;
}

std::string be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

class StateFilesTest : public testing::TempDirTest {
 protected:
  // TFRecord files "<name>-<i>" of `records` records each, of varied lengths.
  std::vector<std::string> write_records(const std::string& name, int files, int records,
                                         Compression compression = Compression::kNone) {
    std::vector<std::string> paths;
    for (int f = 0; f < files; ++f) {
      paths.push_back(path(name + "-" + std::to_string(f)));
      TFRecordWriter writer(paths.back(), compression);
      for (int r = 0; r < records; ++r) {
        writer.write(std::string(static_cast<size_t>(r * 7 % 23), static_cast<char>('a' + f)) +
                     std::to_string(r));
      }
      writer.close();
    }
    return paths;
  }

  // A class folder "images/<class>/<i>.png" of small images.
  std::string write_image_folder(int per_class) {
    const std::string root = path("images");
    for (const std::string c : {"ants", "bees", "cats"}) {
      std::filesystem::create_directories(root + "/" + c);
      for (int i = 0; i < per_class; ++i) {
        testing::write_file(root + "/" + c + "/" + std::to_string(i) + ".png",
                            encode_png(gradient(5 + i % 3, 4, 3, i + c[0])));
      }
    }
    return root;
  }

  // MNIST-style IDX files of n 6x5 images and their labels: {images, labels}.
  std::pair<std::string, std::string> write_idx(uint32_t n) {
    std::string images = be32(kIdxImagesMagic) + be32(n) + be32(6) + be32(5);
    std::string labels = be32(kIdxLabelsMagic) + be32(n);
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t p = 0; p < 30; ++p) images += static_cast<char>((i * 13 + p) & 0xFF);
      labels += static_cast<char>(i % 10);
    }
    testing::write_file(path("images-idx3-ubyte"), images);
    testing::write_file(path("labels-idx1-ubyte"), labels);
    return {path("images-idx3-ubyte"), path("labels-idx1-ubyte")};
  }
};

TEST_F(StateFilesTest, ListFilesInItsShuffledOrder) {
  for (int i = 0; i < 12; ++i) testing::write_file(path("f" + std::to_string(i) + ".txt"), "x");
  const std::string pattern = path("*.txt");
  expect_resumes([pattern] { return Dataset::list_files(pattern, true, 3); });
  // A new order each epoch.
  expect_resumes([pattern] { return Dataset::list_files(pattern, true, 3).repeat(3); });
}

// Shuffled file names read by a parallel interleave under shuffle_and_repeat: each epoch re-reads
// the names in a new order, also after a restore when the interleave had read them all.
TEST_F(StateFilesTest, ShuffledNamesUnderAParallelInterleaveResumeAcrossEpochs) {
  for (int f = 0; f < 4; ++f) testing::write_file(path("n" + std::to_string(f) + ".txt"), "x");
  const std::string pattern = path("n*.txt");
  expect_resumes(
      [pattern] {
        return Dataset::list_files(pattern, true, 5)
            .interleave(
                [](const Tensor& f) {
                  return Dataset::from_tensors(Element{f}).repeat(6).enumerate();
                },
                {.num_parallel_calls = 2})
            .shuffle_and_repeat(8, 3, 8)
            .batch(4);
      },
      {}, {1});
}

TEST_F(StateFilesTest, TFRecordDataset) {
  const auto plain = write_records("plain", 3, 9);
  const auto gzip = write_records("gzip", 2, 11, Compression::kGzip);
  expect_resumes([plain] { return TFRecordDataset(plain); });
  expect_resumes([gzip] { return TFRecordDataset(gzip, "GZIP", /*buffer_size=*/64); });
  // Files read in parallel: an interleave over one dataset per file.
  expect_resumes([plain] { return TFRecordDataset(plain, "", kDefaultTFRecordBufferSize, 2); });
}

TEST_F(StateFilesTest, IdxDataset) {
  const auto [images, labels] = write_idx(40);
  expect_resumes([images, labels] { return IdxDataset(images, labels).shuffle(15, 1).batch(6); });
}

TEST_F(StateFilesTest, ImageFolderFromADirectoryAndAnArchive) {
  const std::string root = write_image_folder(5);
  testing::zip_directory(root, path("images.zip"));
  for (const std::string& where : {root, path("images.zip")}) {
    for (int64_t calls : {int64_t{0}, int64_t{2}}) {
      expect_resumes([where, calls] {
        return decode_image_folder(image_folder(where, {.verbose = false}), 3, calls);
      });
    }
  }
}

TEST_F(StateFilesTest, ArchiveDataset) {
  std::vector<testing::ArchiveMember> members;
  for (int i = 0; i < 9; ++i) {
    members.push_back({"d/m" + std::to_string(i) + (i % 3 == 0 ? ".bin" : ".txt"),
                       std::string(static_cast<size_t>(i * 11), 'q')});
  }
  for (const std::string format : {"zip", "tar.gz"}) {
    const std::string archive = path("a." + format);
    testing::write_archive(archive, format, members);
    expect_resumes([archive] { return ArchiveDataset(archive); });
    expect_resumes([archive] { return ArchiveDataset(archive, "**/*.txt"); });
  }
}

// --- The file sources through expect_dataset: the same elements at 1, 2 and 8 threads, with and
// without static optimizations, against contents written independently of the readers.

TEST_F(StateFilesTest, TFRecordDatasetConforms) {
  const auto files = write_records("conform", 3, 5, Compression::kGzip);
  std::vector<Element> expected;
  for (int f = 0; f < 3; ++f) {
    for (int r = 0; r < 5; ++r) {
      expected.push_back(Element{
          Tensor::scalar(std::string(static_cast<size_t>(r * 7 % 23), static_cast<char>('a' + f)) +
                         std::to_string(r))});
    }
  }
  testing::expect_dataset(TFRecordDataset(files, "GZIP"), expected);
}

TEST_F(StateFilesTest, IdxDatasetConforms) {
  const auto [images, labels] = write_idx(12);
  std::vector<Element> expected;
  for (uint32_t i = 0; i < 12; ++i) {
    Tensor image(DType::kUInt8, Shape{6, 5, 1});
    for (uint32_t p = 0; p < 30; ++p) image.data<uint8_t>()[p] = static_cast<uint8_t>(i * 13 + p);
    expected.push_back(Element{{"image", image}, {"label", Tensor::scalar<int64_t>(i % 10)}});
  }
  testing::expect_dataset(IdxDataset(images, labels), expected);
}

TEST_F(StateFilesTest, ImageFolderConformsFromADirectoryAndAnArchive) {
  const std::string root = write_image_folder(2);
  testing::zip_directory(root, path("images.zip"));
  // Classes in sorted order, files in sorted order within each; PNG keeps the pixels exactly.
  std::vector<Element> expected;
  int64_t label = 0;
  for (const std::string c : {"ants", "bees", "cats"}) {
    for (int i = 0; i < 2; ++i) {
      expected.push_back(Element{{"image", gradient(5 + i % 3, 4, 3, i + c[0])},
                                 {"label", Tensor::scalar<int64_t>(label)}});
    }
    ++label;
  }
  for (const std::string& where : {root, path("images.zip")}) {
    const ImageFolder folder =
        image_folder(where, {.class_mode = ClassMode::kSparse, .verbose = false});
    testing::expect_dataset(decode_image_folder(folder, 3, 2), expected);
  }
}

TEST_F(StateFilesTest, ArchiveDatasetConforms) {
  std::vector<testing::ArchiveMember> members;
  for (int i = 0; i < 5; ++i) {
    members.push_back(
        {"d/m" + std::to_string(i) + ".txt", std::string(static_cast<size_t>(i * 3), 'z')});
  }
  std::vector<Element> expected;
  for (const testing::ArchiveMember& m : members) {
    expected.push_back(
        Element{{"path", Tensor::scalar(m.path)}, {"bytes", Tensor::scalar(m.data)}});
  }
  for (const std::string format : {"zip", "tar.gz"}) {
    const std::string archive = path("conform." + format);
    testing::write_archive(archive, format, members);
    testing::expect_dataset(ArchiveDataset(archive), expected);
  }
}

TEST_F(StateFilesTest, FileCacheRecordingAndReplaying) {
  const std::string prefix = path("cache");
  auto make = [prefix] { return Dataset::range(12).map(noisy, {.seed = 5}).cache(prefix); };
  // No file yet: the recording pass. Each restore records from the saved elements on.
  for (size_t k : {size_t{0}, size_t{5}, size_t{12}}) {
    std::filesystem::remove(prefix + ".sluice-cache");
    std::string state;
    std::vector<std::string> before;
    {
      Iterator it = make().make_iterator();
      before = testing::outputs(it, k);
      state = it.save();
    }
    EXPECT_FALSE(std::filesystem::exists(prefix + ".lockfile")) << "k=" << k;
    Iterator restored = make().make_iterator();
    restored.restore(state);
    std::vector<std::string> whole = before, rest = testing::outputs(restored);
    whole.insert(whole.end(), rest.begin(), rest.end());
    Iterator replay = make().make_iterator();  // Reads the file the restored pass completed.
    EXPECT_EQ(testing::outputs(replay), whole) << "k=" << k;
  }
  // The file exists: the replaying passes.
  expect_resumes([make] { return make().repeat(2); });
}

// The tf.data image tutorial (apps/examples/tfdata_images.cc) on small PNGs.
TEST_F(StateFilesTest, TutorialImagePipeline) {
  write_image_folder(6);
  const std::string pattern = path("images/*/*.png");
  auto make = [pattern] {
    const ImageSize size{4, 4};
    return Dataset::list_files(pattern, true, 42)
        .map([](const Tensor& p) {
          const std::string& s = p.item<std::string>();
          const int64_t label = s.find("/bees/") != std::string::npos   ? 1
                                : s.find("/cats/") != std::string::npos ? 2
                                                                        : 0;
          return Element{{"path", p}, {"label", Tensor::scalar(label)}};
        })
        .shuffle_and_repeat(8, -1, 42)
        .map_and_batch(
            [size](Element e) {
              Tensor image =
                  convert_image_dtype(decode_image(read_file(e["path"]), 3), DType::kFloat32);
              return Element{{"image", resize(image, size)}, {"label", e["label"]}};
            },
            4, /*drop_remainder=*/true, {.num_parallel_calls = kAutotune})
        .prefetch(kAutotune)
        .take(13);
  };
  expect_resumes(make);
}

// The Fashion-MNIST training input of `sluice train` on a small IDX pair.
TEST_F(StateFilesTest, TutorialFashionMnistTrainingInput) {
  const auto [images, labels] = write_idx(50);
  expect_resumes([images, labels] {
    return IdxDataset(images, labels)
        .shuffle(50, 42)
        .map(
            [](Element e, const ElementContext& ctx) {
              Tensor image = convert_image_dtype(e["image"], DType::kFloat32);
              Random random = ctx.random();
              if (random.bernoulli(0.5)) image = image.clone();  // An augmentation's draw.
              return Element{{"image", image}, {"label", e["label"]}};
            },
            {.num_parallel_calls = kAutotune, .seed = 42})
        .batch(8)
        .prefetch(kAutotune);
  });
}

// Keras' flow_from_directory (the cats_dogs tutorial): batches unbatched and re-batched.
TEST_F(StateFilesTest, TutorialFlowFromDirectory) {
  const std::string root = write_image_folder(4);
  testing::zip_directory(root, path("images.zip"));
  for (const std::string& where : {root, path("images.zip")}) {
    expect_resumes([where] {
      return image_data_generator({.rescale = 1 / 255.f, .horizontal_flip = true})
          .flow_from_directory(where, {.target_size = {5, 5},
                                       .batch_size = 5,
                                       .seed = 8,
                                       .num_parallel_calls = 2,
                                       .verbose = false})
          .dataset.unbatch()
          .batch(3, /*drop_remainder=*/true);
    });
  }
}

// The fashion_replicas tutorial's input: samplers interleaved, one per replica.
TEST(StateTest, TutorialReplicaSamplers) {
  expect_resumes([] {
    const Dataset examples = Dataset::range(23);
    return Dataset::range(3).interleave(
        [examples](const Tensor& rank) {
          const int64_t n = 23, replicas = 3, padded = 24;
          return examples.shuffle(n, 5, /*reshuffle_each_iteration=*/false)
              .concatenate(examples.shuffle(n, 5, false).take(padded - n))
              .shard(replicas, rank.item<int64_t>())
              .batch(2);
        },
        {.cycle_length = 3, .block_length = 1});
  });
}

// --- Bad states ----------------------------------------------------------------------------

TEST(StateTest, AStateOfAnotherPipelineIsInvalidArgumentNamingTheStage) {
  const std::string state = state_after(Dataset::range(20).shuffle(5, 1).batch(2).prefetch(2), 3);
  {
    Iterator it = Dataset::range(20).shuffle(5, 1).batch(3).prefetch(2).make_iterator();
    const std::string message = error_of<InvalidArgument>([&] { it.restore(state); });
    EXPECT_NE(message.find("'prefetch/0:batch'"), std::string::npos) << message;
    EXPECT_NE(message.find("batch(batch_size=3"), std::string::npos) << message;
    EXPECT_NE(message.find("batch(batch_size=2"), std::string::npos) << message;
    // Refused before anything changed: the iterator still runs from the start.
    EXPECT_EQ(it.next()->operator[](0).dim(0), 3);
  }
  {
    Iterator it = Dataset::range(20).shuffle(5, 1).batch(2).make_iterator();
    const std::string message = error_of<InvalidArgument>([&] { it.restore(state); });
    EXPECT_NE(message.find("'batch'"), std::string::npos) << message;
  }
  {
    Iterator it = Dataset::range(21).shuffle(5, 1).batch(2).prefetch(2).make_iterator();
    const std::string message = error_of<InvalidArgument>([&] { it.restore(state); });
    EXPECT_NE(message.find("'prefetch/0:batch/0:shuffle/0:range'"), std::string::npos) << message;
    EXPECT_NE(message.find("stop=21"), std::string::npos) << message;
  }
}

TEST(StateTest, ACorruptedOrTruncatedStateIsDataLossNamingTheOffset) {
  const Dataset ds =
      Dataset::range(30).shuffle(6, 1).map(noisy, {.num_parallel_calls = 2}).batch(4);
  const std::string state = state_after(ds, 2);
  for (size_t i = 0; i < state.size(); ++i) {
    std::string bad = state;
    bad[i] ^= 0x20;
    Iterator it = ds.make_iterator();
    const std::string message = error_of<DataLoss>([&] { it.restore(bad); });
    EXPECT_NE(message.find("byte offset"), std::string::npos) << "flip at " << i << ": " << message;
    EXPECT_TRUE(it.next().has_value()) << "a refused state leaves the iterator usable";
  }
  for (size_t n = 0; n < state.size(); ++n) {
    Iterator it = ds.make_iterator();
    const std::string message =
        error_of<DataLoss>([&] { it.restore(std::string_view(state).substr(0, n)); });
    EXPECT_NE(message.find("byte offset"), std::string::npos) << "cut at " << n << ": " << message;
  }
  EXPECT_THROW(ds.make_iterator().restore(state + "x"), DataLoss);
}

TEST(StateTest, RestoreNeedsAFreshIterator) {
  const Dataset ds = Dataset::range(10);
  const std::string state = state_after(ds, 4);
  Iterator used = ds.make_iterator();
  used.next();
  EXPECT_THROW(used.restore(state), FailedPrecondition);
  Iterator twice = ds.make_iterator();
  twice.restore(state);
  EXPECT_THROW(twice.restore(state), FailedPrecondition);
  EXPECT_EQ(twice.next()->operator[](0).item<int64_t>(), 4);
}

TEST_F(StateFilesTest, ATFRecordFileChangedSinceTheSaveIsFailedPreconditionNamingIt) {
  const auto files = write_records("r", 2, 20);
  auto make = [&files] { return TFRecordDataset(files).batch(5); };
  const std::string state = state_after(make(), 5);  // At record 5 of the second file.
  // Shorter than at the save.
  std::filesystem::resize_file(files[1], std::filesystem::file_size(files[1]) / 2);
  {
    Iterator it = make().make_iterator();
    const std::string message = error_of<FailedPrecondition>([&] { it.restore(state); });
    EXPECT_NE(message.find(files[1]), std::string::npos) << message;
    EXPECT_THROW(it.next(), FailedPrecondition) << "a restore that failed halfway";
  }
  // Rewritten with other records: the saved offset is no record boundary any more.
  {
    TFRecordWriter writer(files[1]);
    for (int r = 0; r < 20; ++r) writer.write(std::string(static_cast<size_t>(r * 3 + 1), 'z'));
    writer.write(std::string(2000, 'z'));
    writer.close();
  }
  Iterator it = make().make_iterator();
  const std::string message = error_of<FailedPrecondition>([&] { it.restore(state); });
  EXPECT_NE(message.find(files[1]), std::string::npos) << message;
  EXPECT_NE(message.find("does not parse"), std::string::npos) << message;
}

TEST_F(StateFilesTest, AStateOfAnotherFileListIsInvalidArgument) {
  for (int i = 0; i < 4; ++i) testing::write_file(path("f" + std::to_string(i) + ".txt"), "x");
  const std::string pattern = path("*.txt");
  const std::string state = state_after(Dataset::list_files(pattern, true, 1), 1);
  // As many files, one of another name: the list's digest differs.
  std::filesystem::rename(path("f3.txt"), path("g3.txt"));
  Iterator renamed = Dataset::list_files(pattern, true, 1).make_iterator();
  std::string message = error_of<InvalidArgument>([&] { renamed.restore(state); });
  EXPECT_NE(message.find("'shuffle/0:from_tensor_slices'"), std::string::npos) << message;
  // One more file: the shuffle over all of them is another size.
  testing::write_file(path("f4.txt"), "x");
  Iterator more = Dataset::list_files(pattern, true, 1).make_iterator();
  message = error_of<InvalidArgument>([&] { more.restore(state); });
  EXPECT_NE(message.find("buffer_size=5"), std::string::npos) << message;
}

// Same names, other bytes: the listing (and the plan) are alike, the archive is not.
TEST_F(StateFilesTest, AnArchiveChangedSinceTheSaveIsFailedPreconditionNamingIt) {
  const std::string root = write_image_folder(3);
  const std::string zip = path("images.zip");
  testing::zip_directory(root, zip);
  auto folder = [&zip] { return decode_image_folder(image_folder(zip, {.verbose = false}), 3); };
  auto members = [&zip] { return ArchiveDataset(zip); };
  const std::string folder_state = state_after(folder(), 2);
  const std::string members_state = state_after(members().batch(2), 1);
  testing::write_file(root + "/bees/1.png", encode_png(gradient(9, 9, 3, 1)));
  testing::zip_directory(root, zip);
  for (auto [make, state] :
       {std::pair{std::function<Dataset()>(folder), folder_state},
        std::pair{std::function<Dataset()>([&] { return members().batch(2); }), members_state}}) {
    Iterator it = make().make_iterator();
    const std::string message = error_of<FailedPrecondition>([&] { it.restore(state); });
    EXPECT_NE(message.find(zip), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace sluice
