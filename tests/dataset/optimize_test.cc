// The static rewrites: each one fires where it should and the output does not change.
#include "sluice/graph/optimize.h"

#include <gtest/gtest.h>

#include "tests/dataset/testing.h"

namespace sluice {
namespace {

using testing::collect;

std::vector<std::string> stage_names(const Dataset& ds) {
  Iterator it = ds.make_iterator();
  while (it.next()) {
  }
  std::vector<std::string> names;
  auto stats = it.stats();
  std::sort(stats.begin(), stats.end(),
            [](const auto& a, const auto& b) { return a.depth > b.depth; });
  for (const auto& s : stats) names.push_back(s.name);
  return names;
}

void expect_same_output_unoptimized(const Dataset& ds) {
  Options off;
  off.static_optimizations = false;
  testing::expect_elements(collect(ds), collect(ds, off), "optimized vs unoptimized");
}

Tensor twice(const Tensor& x) { return Tensor::scalar(x.item<int64_t>() * 2); }
Tensor inc(const Tensor& x) { return Tensor::scalar(x.item<int64_t>() + 1); }

TEST(OptimizeTest, AdjacentMapsFuse) {
  auto ds = Dataset::range(10).map(twice).map(inc);
  EXPECT_EQ(stage_names(ds), (std::vector<std::string>{"range", "map x2"}));
  EXPECT_EQ(testing::ints(ds)[3], 7);
  expect_same_output_unoptimized(ds);
  // Maps of different kinds stay apart.
  auto mixed = Dataset::range(10).map(twice).map(inc, {.num_parallel_calls = 2});
  EXPECT_EQ(stage_names(mixed), (std::vector<std::string>{"range", "map", "map"}));
}

TEST(OptimizeTest, ParallelMapThenBatchFusesAndPrefetchFolds) {
  auto ds = Dataset::range(100).map(twice, {.num_parallel_calls = 2}).batch(10).prefetch(3);
  EXPECT_EQ(stage_names(ds), (std::vector<std::string>{"range", "map_and_batch"}));
  expect_same_output_unoptimized(ds);
  auto tuned = Dataset::range(100).map(twice, {.num_parallel_calls = kAutotune}).batch(10);
  EXPECT_EQ(stage_names(tuned.prefetch(kAutotune)),
            (std::vector<std::string>{"range", "map_and_batch"}));
  expect_same_output_unoptimized(tuned.prefetch(kAutotune));
  // A second tuned prefetch has no tuned buffer left to fold into.
  EXPECT_EQ(stage_names(tuned.prefetch(kAutotune).prefetch(kAutotune)),
            (std::vector<std::string>{"range", "map_and_batch", "prefetch"}));
  // A sequential map is not fused into an async stage.
  EXPECT_EQ(stage_names(Dataset::range(100).map(twice).batch(10)),
            (std::vector<std::string>{"range", "map", "batch"}));
}

// Datasets that stages make while running (interleave's, flat_map's, a window's reduction) are
// rewritten as the root's plan is: a parallel map then batch inside them runs as map_and_batch,
// with the same output and exact resumes, and as written when the rewrites are off.
TEST(OptimizeTest, DatasetsMadeWhileRunningAreRewrittenToo) {
  auto batches = [](const Dataset& ds) {
    return ds.map(twice, {.num_parallel_calls = 2}).batch(4).prefetch(kAutotune);
  };
  auto interleaved = [&] {
    return Dataset::range(3).interleave(
        [&](const Tensor& x) { return batches(Dataset::range(x.item<int64_t>() * 10, 30)); },
        {.cycle_length = 2});
  };
  auto flat_mapped = [&] {
    return Dataset::range(3).flat_map(
        [&](const Tensor& x) { return batches(Dataset::range(x.item<int64_t>() * 10, 30)); });
  };
  auto grouped = [&] {
    return Dataset::range(40).group_by_window(
        [](const Tensor& x) { return x.item<int64_t>() % 3; },
        [&](int64_t, const Dataset& window) { return batches(window); }, 8);
  };
  Options off;
  off.static_optimizations = false;
  for (const auto& make :
       {std::function<Dataset()>(interleaved), std::function<Dataset()>(flat_mapped),
        std::function<Dataset()>(grouped)}) {
    const std::vector<std::string> names = stage_names(make());
    EXPECT_NE(std::find(names.begin(), names.end(), "map_and_batch"), names.end());
    EXPECT_EQ(std::find(names.begin(), names.end(), "batch"), names.end());
    EXPECT_EQ(std::find(names.begin(), names.end(), "prefetch"), names.end());
    Iterator plain = make().make_iterator(off);
    while (plain.next()) {
    }
    bool batched_apart = false;
    for (const auto& s : plain.stats()) batched_apart = batched_apart || s.name == "batch";
    EXPECT_TRUE(batched_apart) << plain.stats_table();
    expect_same_output_unoptimized(make());
    testing::expect_resumes(make);
  }
}

TEST(OptimizeTest, ShuffleThenRepeatFuses) {
  EXPECT_EQ(stage_names(Dataset::range(10).shuffle(4, 1).repeat(2)),
            (std::vector<std::string>{"range", "shuffle_and_repeat"}));
  EXPECT_EQ(stage_names(Dataset::range(10).shuffle(4, 1, false).repeat(2)),
            (std::vector<std::string>{"range", "shuffle", "repeat"}));
}

TEST(OptimizeTest, NoOpsAreDropped) {
  auto ds = Dataset::range(10).take(-1).skip(0).repeat(1).prefetch(0).with_options(Options{});
  EXPECT_EQ(stage_names(ds), (std::vector<std::string>{"range"}));
  expect_same_output_unoptimized(ds);
}

TEST(OptimizeTest, CollectOptionsLetsOuterSettingsWin) {
  Options inner;
  inner.threads = 2;
  inner.seed = 1;
  Options outer;
  outer.threads = 5;
  auto merged =
      collect_options(Dataset::range(3).with_options(inner).batch(2).with_options(outer).plan());
  EXPECT_EQ(*merged.threads, 5);
  EXPECT_EQ(*merged.seed, 1u);
}

}  // namespace
}  // namespace sluice
