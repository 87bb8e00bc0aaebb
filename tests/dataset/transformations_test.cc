#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/dataset/testing.h"

namespace sluice {
namespace {

using testing::collect;
using testing::expect_dataset;
using testing::I;
using testing::ints;
using testing::Is;
using testing::V;

Tensor plus(const Tensor& x, int64_t k) { return Tensor::scalar(x.item<int64_t>() + k); }
Tensor square(const Tensor& x) { return Tensor::scalar(x.item<int64_t>() * x.item<int64_t>()); }

TEST(MapTest, SequentialAndParallelGiveTheSameOrderedOutput) {
  expect_dataset(Dataset::range(5).map([](const Tensor& x) { return plus(x, 1); }),
                 Is({1, 2, 3, 4, 5}));
  for (int64_t parallel : {int64_t{1}, int64_t{3}, kAutotune}) {
    expect_dataset(Dataset::range(1000).map(square, {.num_parallel_calls = parallel}), [] {
      std::vector<Element> expected;
      for (int64_t i = 0; i < 1000; ++i) expected.push_back(I(i * i));
      return expected;
    }());
  }
}

TEST(MapTest, NonDeterministicParallelMapKeepsTheMultiset) {
  auto ds = Dataset::range(2000).map(square, {.num_parallel_calls = 4, .deterministic = false});
  auto values = ints(ds);
  std::sort(values.begin(), values.end());
  ASSERT_EQ(values.size(), 2000u);
  for (int64_t i = 0; i < 2000; ++i) EXPECT_EQ(values[static_cast<size_t>(i)], i * i);
}

TEST(MapTest, ElementFunctionsAndNamedComponents) {
  auto ds = Dataset::from_tensor_slices(Element{{"a", Tensor::from_vector<int64_t>({1, 2})},
                                                {"b", Tensor::from_vector<int64_t>({10, 20})}})
                .map([](Element e) {
                  return Element{
                      {"sum", Tensor::scalar(e["a"].item<int64_t>() + e["b"].item<int64_t>())}};
                });
  auto out = collect(ds);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1]["sum"].item<int64_t>(), 22);
}

TEST(FilterTest, KeepsMatchingElements) {
  expect_dataset(
      Dataset::range(10).filter([](const Tensor& x) { return x.item<int64_t>() % 3 == 0; }),
      Is({0, 3, 6, 9}));
  EXPECT_EQ(Dataset::range(10).filter([](const Element&) { return true; }).cardinality(),
            kUnknownCardinality);
}

TEST(BatchTest, DropRemainderAndCardinality) {
  // tf.data batch_test.testBasic: 7 slices, map square, repeat 28 = 196 elements.
  auto base = Dataset::range(7).map(square).repeat(28);
  EXPECT_EQ(base.batch(14).cardinality(), 14);
  EXPECT_EQ(collect(base.batch(14)).size(), 14u);
  EXPECT_EQ(base.batch(15).cardinality(), 14);
  auto batches = collect(base.batch(15));
  ASSERT_EQ(batches.size(), 14u);
  EXPECT_EQ(batches.back()[0].shape(), Shape({1}));
  EXPECT_EQ(collect(base.batch(15, true)).size(), 13u);
  EXPECT_EQ(base.batch(15, true).cardinality(), 13);
  EXPECT_TRUE(collect(Dataset::range(7).repeat(0).batch(3)).empty());
  EXPECT_THROW(Dataset::range(3).batch(0), InvalidArgument);
}

TEST(BatchTest, StacksComponentsAndKeepsNames) {
  auto ds = Dataset::from_tensor_slices(
                Element{{"x", Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{3, 2})},
                        {"s", Tensor::from_strings({"a", "b", "c"})}})
                .batch(2);
  auto out = collect(ds);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0]["x"].equals(Tensor::from_vector<float>({1, 2, 3, 4}, Shape{2, 2})));
  EXPECT_TRUE(out[0]["s"].equals(Tensor::from_strings({"a", "b"})));
  EXPECT_TRUE(out[1]["x"].equals(Tensor::from_vector<float>({5, 6}, Shape{1, 2})));
}

TEST(BatchTest, StringsLieBackToBackInOneBuffer) {
  // Rows of two strings, each a std::string tensor of its own (as a reader makes them).
  auto rows = Dataset::range(5).map([](const Tensor& x) {
    const std::string n(static_cast<size_t>(x.item<int64_t>()) + 1, 'a');
    return Tensor::from_strings({n, n + "!"});
  });
  const auto out = collect(rows.batch(3));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0][0].equals(
      Tensor::from_vector<std::string>({"a", "a!", "aa", "aa!", "aaa", "aaa!"}, Shape{3, 2})));
  EXPECT_TRUE(out[1][0].equals(
      Tensor::from_vector<std::string>({"aaaa", "aaaa!", "aaaaa", "aaaaa!"}, Shape{2, 2})));
  const StringElements s = out[0][0].strings();
  for (int64_t i = 1; i < s.size(); ++i) EXPECT_EQ(s[i].data(), s[i - 1].data() + s[i - 1].size());
  // Unbatched, each value is still itself.
  expect_dataset(rows.batch(2).unbatch(), collect(rows));
}

TEST(PaddedBatchTest, PadsToTheLargestOrTheGivenShape) {
  auto ragged = Dataset::range(1, 4).map([](const Tensor& x) {
    const int64_t n = x.item<int64_t>();
    return Tensor::from_vector<int64_t>(std::vector<int64_t>(static_cast<size_t>(n), n));
  });
  auto out = collect(ragged.padded_batch(3));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(
      out[0][0].equals(Tensor::from_vector<int64_t>({1, 0, 0, 2, 2, 0, 3, 3, 3}, Shape{3, 3})));
  PaddingSpec spec{{{5}}, {Tensor::scalar<int64_t>(-1)}};
  auto padded = collect(ragged.padded_batch(2, spec));
  ASSERT_EQ(padded.size(), 2u);
  EXPECT_TRUE(padded[0][0].equals(
      Tensor::from_vector<int64_t>({1, -1, -1, -1, -1, 2, 2, -1, -1, -1}, Shape{2, 5})));
  PaddingSpec too_small{{{2}}, {}};
  EXPECT_THROW(collect(ragged.padded_batch(3, too_small)), InvalidArgument);
}

TEST(UnbatchTest, InvertsBatchWithoutCopying) {
  expect_dataset(Dataset::range(10).batch(3).unbatch(), Is(testing::range_vector(10)));
  EXPECT_THROW(collect(Dataset::from_tensors(Element{Tensor::from_vector<int64_t>({1, 2}),
                                                     Tensor::from_vector<int64_t>({1})})
                           .unbatch()),
               InvalidArgument);
}

TEST(MapAndBatchTest, PartialBatch) {
  // tf.data map_and_batch_test.testMapAndBatchPartialBatch.
  auto f = [](const Tensor& x) { return square(x).reshape({1}); };
  auto keep = Dataset::range(10).map_and_batch(f, 4, false, {.num_parallel_calls = 2});
  auto out = collect(keep);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0][0].equals(Tensor::from_vector<int64_t>({0, 1, 4, 9}, Shape{4, 1})));
  EXPECT_TRUE(out[1][0].equals(Tensor::from_vector<int64_t>({16, 25, 36, 49}, Shape{4, 1})));
  EXPECT_TRUE(out[2][0].equals(Tensor::from_vector<int64_t>({64, 81}, Shape{2, 1})));
  EXPECT_EQ(collect(Dataset::range(10).map_and_batch(f, 4, true, {.num_parallel_calls = 2})).size(),
            2u);
}

TEST(MapAndBatchTest, ContiguousBlocksAndDropRemainder) {
  auto id = [](Element e) { return e; };
  auto out = collect(
      Dataset::range(50000).map_and_batch(id, 100, false, {.num_parallel_calls = kAutotune}));
  ASSERT_EQ(out.size(), 500u);
  for (size_t b = 0; b < out.size(); ++b) {
    auto v = out[b][0].values<int64_t>();
    ASSERT_EQ(v.size(), 100u);
    for (size_t i = 0; i < 100; ++i) ASSERT_EQ(v[i], static_cast<int64_t>(b * 100 + i));
  }
  EXPECT_EQ(
      collect(Dataset::range(40099).map_and_batch(id, 100, true, {.num_parallel_calls = 3})).size(),
      400u);
  EXPECT_THROW(Dataset::range(3).map_and_batch(id, 0), InvalidArgument);
}

TEST(MapAndBatchTest, CheapBatchesShareTasksAndEachStaysItself) {
  // Cheap elements make tasks of many batches: each batch is still its own, the function sees
  // each element's own index, and an error fails only the batch it is in.
  const auto f = [](Element e, const ElementContext& c) {
    const int64_t x = e[0].item<int64_t>();
    if (x != c.index)
      throw InvalidArgument("index " + std::to_string(c.index) + " for " + std::to_string(x));
    if (x == 12345) throw InvalidArgument("bad element");
    return e;
  };
  for (const bool drop : {false, true}) {
    const auto out = collect(Dataset::range(30011)
                                 .map_and_batch(f, 7, drop, {.num_parallel_calls = kAutotune})
                                 .ignore_errors());
    std::vector<int64_t> expected_firsts;
    for (int64_t b = 0; b * 7 < 30011; ++b) {
      if (b != 12345 / 7 && !(drop && b * 7 + 7 > 30011)) expected_firsts.push_back(b * 7);
    }
    ASSERT_EQ(out.size(), expected_firsts.size()) << drop;
    for (size_t i = 0; i < out.size(); ++i) {
      const auto v = out[i][0].values<int64_t>();
      const int64_t first = expected_firsts[i];
      ASSERT_EQ(static_cast<int64_t>(v.size()), std::min<int64_t>(7, 30011 - first)) << i;
      for (size_t k = 0; k < v.size(); ++k) ASSERT_EQ(v[k], first + static_cast<int64_t>(k));
    }
  }
}

TEST(MapAndBatchTest, MismatchedShapesNameTheElements) {
  auto ds = Dataset::range(4).map_and_batch(
      [](const Tensor& x) {
        return x.item<int64_t>() == 3 ? Tensor(DType::kInt64, {1, 3}) : Tensor(DType::kInt64, {1});
      },
      4, false, {.num_parallel_calls = 2});
  try {
    collect(ds);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("element 3 had shape [1, 3]"), std::string::npos)
        << e.what();
  }
}

TEST(PrefetchTest, BufferSizes) {
  for (int64_t b : {kAutotune, int64_t{0}, int64_t{1}, int64_t{42}}) {
    expect_dataset(Dataset::range(10).prefetch(b), Is(testing::range_vector(10)));
  }
  EXPECT_THROW(Dataset::range(10).prefetch(-2), InvalidArgument);
  EXPECT_THROW(Dataset::range(10).prefetch(-42), InvalidArgument);
}

TEST(TakeSkipTest, Counts) {
  for (int64_t c : {-1, 0, 4, 10, 25}) {
    auto expected = testing::range_vector(c < 0 ? 10 : std::min<int64_t>(c, 10));
    expect_dataset(Dataset::range(10).take(c), Is(expected));
  }
  expect_dataset(Dataset::range(10).skip(7), Is({7, 8, 9}));
  expect_dataset(Dataset::range(10).skip(-1), {});
  expect_dataset(Dataset::range(10).skip(25), {});
  EXPECT_EQ(Dataset::range(10).repeat().take(5).cardinality(), 5);
  EXPECT_EQ(ints(Dataset::range(10).repeat().take(25)).size(), 25u);
}

TEST(ShardTest, KeepsEveryNthElement) {
  // tf.data shard_test.
  expect_dataset(Dataset::range(10).shard(5, 2), Is({2, 7}));
  expect_dataset(Dataset::range(10).shard(5, 0), Is({0, 5}));
  expect_dataset(Dataset::range(10).shard(5, 4), Is({4, 9}));
  expect_dataset(Dataset::range(10).shard(4, 3), Is({3, 7}));
  expect_dataset(Dataset::range(10).shard(7, 5), Is({5}));
  expect_dataset(Dataset::range(10).shard(20, 5), Is({5}));
  expect_dataset(Dataset::range(1).shard(5, 2), {});
  EXPECT_THROW(Dataset::range(10).shard(5, 7), InvalidArgument);
  EXPECT_THROW(Dataset::range(10).shard(5, -3), InvalidArgument);
  EXPECT_THROW(Dataset::range(10).shard(-3, 1), InvalidArgument);
  EXPECT_THROW(Dataset::range(10).shard(0, 1), InvalidArgument);
}

TEST(ZipTest, StopsAtTheShortestAndConcatenatesComponents) {
  // tf.data zip_test.testZipUnequal.
  auto a = Dataset::from_tensor_slices(Element{Tensor::from_vector<int64_t>({1, 2, 3, 4})});
  auto b = Dataset::from_tensor_slices(Element{Tensor::from_vector<int64_t>({1, 2, 3, 4, 5})});
  auto c = Dataset::from_tensor_slices(Element{Tensor::from_vector<float>({1.0f, 2.0f})});
  auto zipped = Dataset::zip({a, b, c});
  EXPECT_EQ(zipped.cardinality(), 2);
  expect_dataset(
      zipped,
      {Element{Tensor::scalar<int64_t>(1), Tensor::scalar<int64_t>(1), Tensor::scalar(1.0f)},
       Element{Tensor::scalar<int64_t>(2), Tensor::scalar<int64_t>(2), Tensor::scalar(2.0f)}});
  EXPECT_EQ(Dataset::range(3).zip(Dataset::range(5).repeat()).cardinality(), 3);
}

TEST(ConcatenateTest, AThenB) {
  expect_dataset(Dataset::range(3).concatenate(Dataset::range(10, 12)), Is({0, 1, 2, 10, 11}));
  EXPECT_EQ(Dataset::range(3).concatenate(Dataset::range(2).repeat()).cardinality(),
            kInfiniteCardinality);
}

TEST(InterleaveTest, MatchesTheDocumentedOrder) {
  // tf.data's docstring: range(1, 6).interleave(from_tensors(x).repeat(6), cycle 2, block 4).
  const std::vector<int64_t> expected = {1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3,
                                         3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5};
  for (int64_t parallel : {int64_t{0}, int64_t{2}}) {
    auto ds = Dataset::range(1, 6).interleave(
        [](const Tensor& x) { return Dataset::from_tensors(Element{x}).repeat(6); },
        {.cycle_length = 2, .block_length = 4, .num_parallel_calls = parallel});
    expect_dataset(ds, Is(expected));
  }
}

TEST(InterleaveTest, ShardPlusInterleavePlusRepeatCounts) {
  auto files = Dataset::range(8).shard(2, 1);  // 1, 3, 5, 7
  auto ds = files.interleave(
      [](const Tensor& x) {
        return Dataset::range(x.item<int64_t>() * 100, x.item<int64_t>() * 100 + 3);
      },
      {.cycle_length = 4, .block_length = 1, .num_parallel_calls = 2});
  auto values = ints(ds.repeat(3));
  EXPECT_EQ(values.size(), 4u * 3 * 3);
  EXPECT_EQ(std::count(values.begin(), values.end(), 501), 3);
  EXPECT_EQ(values[0], 100);
  EXPECT_EQ(values[1], 300);
}

TEST(EnumerateTest, PrependsACounter) {
  auto out = collect(Dataset::range(10, 13).enumerate(5));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2][0].item<int64_t>(), 7);
  EXPECT_EQ(out[2][1].item<int64_t>(), 12);
  auto named = collect(Dataset::from_tensors(Element{{"x", Tensor::scalar(1.0f)}}).enumerate());
  EXPECT_EQ(named[0]["index"].item<int64_t>(), 0);
  EXPECT_EQ(named[0]["x"].item<float>(), 1.0f);
}

TEST(CacheTest, MemoryCacheReplaysTheFirstCompletePass) {
  int calls = 0;
  auto ds = Dataset::range(5)
                .map([&calls](const Tensor& x) {
                  ++calls;
                  return x;
                })
                .cache();
  EXPECT_EQ(ints(ds), testing::range_vector(5));
  EXPECT_EQ(ints(ds), testing::range_vector(5));
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(ints(ds.repeat(3)).size(), 15u);
  EXPECT_EQ(calls, 5);
}

TEST(CacheTest, PartialPassesCacheNothing) {
  int calls = 0;
  auto ds = Dataset::range(5)
                .map([&calls](const Tensor& x) {
                  ++calls;
                  return x;
                })
                .cache();
  {
    Iterator it = ds.make_iterator();
    it.next();
  }
  EXPECT_EQ(ints(ds), testing::range_vector(5));
  EXPECT_GT(calls, 5);
}

TEST(CacheTest, FileCacheIsWrittenOnceAndGuardedByALockfile) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("sluice_cache_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string prefix = (dir / "c").string();
  auto source = Dataset::from_tensor_slices(
      Element{{"x", Tensor::from_vector<float>({1, 2, 3, 4}, Shape{2, 2})},
              {"s", Tensor::from_strings({"first", "second"})}});
  auto expected = collect(source);
  testing::expect_elements(collect(source.cache(prefix)), expected, "writing pass");
  EXPECT_TRUE(std::filesystem::exists(prefix + ".sluice-cache"));
  EXPECT_FALSE(std::filesystem::exists(prefix + ".lockfile"));
  // A new dataset over other data with the same prefix reads the cache file.
  testing::expect_elements(collect(Dataset::range(3).cache(prefix)), expected, "reading pass");

  const std::string locked = (dir / "locked").string();
  { std::ofstream(locked + ".lockfile") << ""; }
  EXPECT_THROW(collect(source.cache(locked)), AlreadyExists);

  const std::string truncated = (dir / "t").string();
  collect(source.cache(truncated));
  std::filesystem::resize_file(truncated + ".sluice-cache", 30);
  EXPECT_THROW(collect(source.cache(truncated)), DataLoss);
  std::filesystem::remove_all(dir);
}

TEST(WithOptionsTest, OptionsReachTheIterator) {
  auto ds = Dataset::range(3).with_options(testing::threads(3));
  EXPECT_EQ(*ds.make_iterator().options().threads, 3);
  Options other;
  other.deterministic = false;
  auto both = ds.with_options(other);
  Iterator it = both.make_iterator();
  EXPECT_EQ(*it.options().threads, 3);
  EXPECT_FALSE(*it.options().deterministic);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// tf.data batch_test.testDeterminismConfiguration: a stage's own `deterministic` wins, unset
// defers to Options::deterministic.
TEST(DeterminismConfigurationTest, LocalSettingWinsAndUnsetDefersToOptions) {
  auto make = [](std::optional<bool> local) {
    // Element 0 is held back until three later elements have been mapped (the parallel window
    // always has room for three more tasks), so a non-deterministic map must deliver some of
    // them before it, whatever the machine's speed.
    auto later_done = std::make_shared<std::atomic<int>>(0);
    return Dataset::range(20).map(
        [later_done](const Tensor& x) {
          if (x.item<int64_t>() != 0) {
            ++*later_done;
          } else {
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
            while (*later_done < 3 && std::chrono::steady_clock::now() < deadline) {
              std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
          }
          return x;
        },
        {.num_parallel_calls = 2, .deterministic = local});
  };
  Options nondeterministic;
  nondeterministic.deterministic = false;
  nondeterministic.threads = 2;
  Options deterministic;
  deterministic.deterministic = true;
  deterministic.threads = 2;
  auto first = [](const Dataset& ds, const Options& o) { return testing::ints(ds, o).front(); };
  EXPECT_EQ(first(make(std::nullopt), deterministic), 0);
  EXPECT_NE(first(make(std::nullopt), nondeterministic), 0);
  EXPECT_EQ(first(make(true), nondeterministic), 0);
  EXPECT_NE(first(make(false), deterministic), 0);
}

}  // namespace
}  // namespace sluice
