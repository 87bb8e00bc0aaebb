// Iterator state: every stage and the tutorial pipelines pass the checkpoint conformance (take k,
// save, restore into a fresh iterator, read on: a straight run's outputs), and bad states are
// refused with the error that names what is wrong.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "core/errors.h"
#include "dataset/dataset.h"
#include "tests/dataset/testing.h"
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
  // Each epoch a new order: the restored iterator must draw the saved epoch's and the later ones.
  Options unfused;
  unfused.static_optimizations = false;
  expect_resumes([] { return Dataset::range(20).shuffle(8, 5).repeat(3); }, unfused);
  expect_resumes([] { return Dataset::range(20).shuffle(8, 5, false).repeat(3); });
  // Without a seed of its own the stage's seed comes from Options::seed.
  expect_resumes([] { return Dataset::range(20).shuffle(8).repeat(2); }, unfused);
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

TEST(StateTest, Prefetch) {
  expect_resumes([] { return Dataset::range(60).prefetch(3); });
  expect_resumes([] {
    return Dataset::range(60).map(noisy, {.num_parallel_calls = kAutotune}).prefetch(kAutotune);
  });
  expect_resumes([] { return Dataset::range(60).batch(4).prefetch(1).unbatch().prefetch(2); });
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

}  // namespace
}  // namespace sluice
