#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/dataset/testing.h"

namespace sluice {
namespace {

using testing::collect;
using testing::expect_dataset;
using testing::ints;
using testing::Is;
using testing::range_vector;

std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(RepeatTest, Counts) {
  // tf.data repeat_test.
  auto x = Dataset::from_tensors(testing::V({1, 2, 3}));
  for (int64_t c : {0, 3, 7}) EXPECT_EQ(collect(x.repeat(c)).size(), static_cast<size_t>(c));
  EXPECT_EQ(collect(x.repeat(7).repeat(14)).size(), 98u);
  EXPECT_EQ(x.repeat(7).repeat(14).cardinality(), 98);
  EXPECT_EQ(x.repeat(-1).cardinality(), kInfiniteCardinality);
  EXPECT_EQ(ints(Dataset::range(3).repeat(-1).take(10)),
            (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0}));
}

TEST(RepeatTest, InfiniteRepeatOfAnEmptyDatasetEnds) {
  EXPECT_TRUE(collect(Dataset::range(0).repeat(-1)).empty());
  EXPECT_TRUE(
      collect(Dataset::range(5).filter([](const Element&) { return false; }).repeat()).empty());
}

TEST(RepeatTest, BatchBeforeRepeatFlushesEachEpoch) {
  auto out = collect(Dataset::range(7).batch(3).repeat(2));
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[2][0].dim(0), 1);
  EXPECT_EQ(out[5][0].dim(0), 1);
  EXPECT_EQ(collect(Dataset::range(7).repeat(2).batch(3)).size(), 5u);
}

TEST(ShuffleTest, BasicSeededBehaviour) {
  // tf.data shuffle_test.testBasic: 4 slices repeated 5 times.
  auto base =
      Dataset::from_tensor_slices(Element{Tensor::from_vector<int64_t>({1, 2, 3, 4})}).repeat(5);
  auto a = ints(base.shuffle(100, 37));
  auto b = ints(base.shuffle(100, 37));
  auto c = ints(base.shuffle(100, 137));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(sorted(a), sorted(c));
  EXPECT_EQ(sorted(ints(base.shuffle(2, 37))), sorted(a));
  EXPECT_NE(a, ints(base)) << "a shuffle of 20 elements should move something";
  Iterator empty = base.shuffle(100, 37).repeat(0).make_iterator();
  EXPECT_FALSE(empty.next().has_value());
  EXPECT_FALSE(empty.next().has_value());
}

TEST(ShuffleTest, BufferOfOneKeepsOrderAndFullBufferIsAPermutation) {
  EXPECT_EQ(ints(Dataset::range(100).shuffle(1, 5)), range_vector(100));
  auto full = ints(Dataset::range(100).shuffle(1000, 5));
  EXPECT_NE(full, range_vector(100));
  EXPECT_EQ(sorted(full), range_vector(100));
}

TEST(ShuffleTest, SmallBufferOnlyMovesElementsLocally) {
  auto values = ints(Dataset::range(1000).shuffle(10, 3));
  for (size_t i = 0; i < values.size(); ++i) {
    // With a buffer of 10, output i is one of the first i + 10 inputs.
    EXPECT_LT(values[i], static_cast<int64_t>(i) + 10);
  }
}

TEST(ShuffleTest, DefaultArgumentsAreUniform) {
  // tf.data shuffle_test.testDefaultArguments: 50 draws of [0..4].shuffle(5).repeat().
  auto values = ints(Dataset::range(5).shuffle(5).repeat().take(50));
  for (int64_t v = 0; v < 5; ++v) EXPECT_EQ(std::count(values.begin(), values.end(), v), 10);
}

TEST(ShuffleTest, ReshuffleEachIteration) {
  // tf.data shuffle_test.testReshuffleRepeatEpochs.
  for (bool reshuffle : {true, false}) {
    auto values = ints(Dataset::range(10).shuffle(10, 42, reshuffle).repeat(2));
    ASSERT_EQ(values.size(), 20u);
    std::vector<int64_t> first(values.begin(), values.begin() + 10);
    std::vector<int64_t> second(values.begin() + 10, values.end());
    EXPECT_EQ(sorted(first), range_vector(10));
    EXPECT_EQ(sorted(second), range_vector(10));
    EXPECT_EQ(first == second, !reshuffle) << "reshuffle_each_iteration=" << reshuffle;
  }
  // A new iterator over the same dataset reshuffles too.
  auto ds = Dataset::range(20).shuffle(20, 9);
  EXPECT_NE(ints(ds), ints(ds));
  auto fixed = Dataset::range(20).shuffle(20, 9, false);
  EXPECT_EQ(ints(fixed), ints(fixed));
}

void expect_epochs_are_permutations(const std::vector<int64_t>& values, int64_t n) {
  ASSERT_EQ(values.size() % static_cast<size_t>(n), 0u);
  std::vector<int64_t> previous;
  for (size_t start = 0; start < values.size(); start += static_cast<size_t>(n)) {
    std::vector<int64_t> epoch(
        values.begin() + static_cast<std::ptrdiff_t>(start),
        values.begin() + static_cast<std::ptrdiff_t>(start + static_cast<size_t>(n)));
    EXPECT_EQ(sorted(epoch), range_vector(n)) << "epoch at " << start;
    EXPECT_NE(epoch, previous) << "consecutive epochs must differ";
    previous = epoch;
  }
}

TEST(ShuffleAndRepeatTest, EachEpochIsAPermutationAndEpochsDiffer) {
  // tf.data shuffle_and_repeat_test: range(20), buffer 5, count 5, seed 10.
  auto a = ints(Dataset::range(20).shuffle_and_repeat(5, 5, 10));
  ASSERT_EQ(a.size(), 100u);
  expect_epochs_are_permutations(a, 20);
  EXPECT_EQ(a, ints(Dataset::range(20).shuffle_and_repeat(5, 5, 10)));
  auto b = ints(Dataset::range(20).shuffle_and_repeat(5, 5, 20));
  EXPECT_NE(a, b);
  EXPECT_EQ(sorted(a), sorted(b));
  EXPECT_EQ(ints(Dataset::range(20).shuffle_and_repeat(21, 2, 1)).size(), 40u);
  EXPECT_EQ(ints(Dataset::range(20).shuffle_and_repeat(5, -1, 1).take(150)).size(), 150u);
  EXPECT_TRUE(collect(Dataset::range(0).shuffle_and_repeat(5)).empty());
  EXPECT_EQ(Dataset::range(20).shuffle_and_repeat(5, 5).cardinality(), 100);
}

TEST(ShuffleAndRepeatTest, FusedAndUnfusedAgreeOnSemantics) {
  // shuffle().repeat() is rewritten into the fused stage; both must keep epochs apart.
  Options unfused;
  unfused.static_optimizations = false;
  auto ds = Dataset::range(50).shuffle(16, 4).repeat(4);
  expect_epochs_are_permutations(ints(ds), 50);
  expect_epochs_are_permutations(ints(ds, unfused), 50);
}

TEST(ListFilesLikeTest, ShuffleOfAllElementsWithFixedSeedIsRepeatable) {
  // tf.data list_files_test.testFixedSeedResultsInRepeatableOrder, on names.
  auto names = Element{Tensor::from_strings({"a", "b", "c", "d"})};
  auto order = [&] {
    std::vector<std::string> out;
    for (const Element& e : Dataset::from_tensor_slices(names).shuffle(4, 37)) {
      out.push_back(e[0].item<std::string>());
    }
    return out;
  };
  const auto first = order();
  EXPECT_EQ(first, order());
  EXPECT_EQ(std::set<std::string>(first.begin(), first.end()).size(), 4u);
}

}  // namespace
}  // namespace sluice
