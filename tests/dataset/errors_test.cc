#include <gtest/gtest.h>

#include <cmath>

#include "tests/dataset/testing.h"

namespace sluice {
namespace {

using testing::collect;
using testing::ints;
using testing::threads;

// 1, 2, 3, NaN, 5 with a check_numerics-like map.
Dataset numbers_with_nan() {
  return Dataset::from_tensor_slices(
      Element{Tensor::from_vector<float>({1, 2, 3, std::nanf(""), 5})});
}

Element check_numerics(Element e) {
  if (std::isnan(e[0].item<float>())) throw InvalidArgument("Tensor had NaN values");
  return e;
}

TEST(MapErrorTest, ErrorsArePerElementAndNameTheStageAndIndex) {
  // tf.data map_test.testParallelMapError.
  for (int64_t parallel : {int64_t{0}, int64_t{2}}) {
    Iterator it =
        numbers_with_nan().map(check_numerics, {.num_parallel_calls = parallel}).make_iterator();
    EXPECT_EQ(it.next()->operator[](0).item<float>(), 1);
    EXPECT_EQ(it.next()->operator[](0).item<float>(), 2);
    EXPECT_EQ(it.next()->operator[](0).item<float>(), 3);
    try {
      it.next();
      FAIL() << "expected the NaN element to fail";
    } catch (const InvalidArgument& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("Tensor had NaN values"), std::string::npos);
      EXPECT_NE(message.find("stage 'map'"), std::string::npos) << message;
      EXPECT_NE(message.find("element 3"), std::string::npos) << message;
    }
    EXPECT_EQ(it.next()->operator[](0).item<float>(), 5);
    EXPECT_FALSE(it.next().has_value());
  }
}

TEST(MapErrorTest, IgnoreErrorsSkipsAndCounts) {
  // tf.data ignore_errors_test.testMapIgnoreError / testParallelMapIgnoreError.
  for (int64_t parallel : {int64_t{0}, int64_t{2}}) {
    auto ds =
        numbers_with_nan().map(check_numerics, {.num_parallel_calls = parallel}).ignore_errors();
    Iterator it = ds.make_iterator();
    std::vector<float> values;
    while (auto e = it.next()) values.push_back((*e)[0].item<float>());
    EXPECT_EQ(values, (std::vector<float>{1, 2, 3, 5}));
    int64_t ignored = 0;
    for (const auto& s : it.stats()) {
      if (s.name == "ignore_errors") ignored = s.errors;
    }
    EXPECT_EQ(ignored, 1);
  }
}

TEST(MapErrorTest, ZipWithAFailedComponentFailsThatPositionOnly) {
  // tf.data ignore_errors_test.testZipIgnoreError.
  auto x = Dataset::from_tensor_slices(Element{Tensor::from_vector<float>({1, 2, 0, 4})});
  auto inverse = x.map([](const Tensor& t) {
    if (t.item<float>() == 0) throw InvalidArgument("division by zero");
    return Tensor::scalar(1.0f / t.item<float>());
  });
  auto out = collect(Dataset::zip({inverse, x}).ignore_errors());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1][0].item<float>(), 0.5f);
  EXPECT_EQ(out[1][1].item<float>(), 2.0f);
  EXPECT_EQ(out[2][0].item<float>(), 0.25f);
  EXPECT_EQ(out[2][1].item<float>(), 4.0f);
}

TEST(MapErrorTest, OutOfRangeInsideAFunctionIsAnErrorNotTheEnd) {
  auto ds = Dataset::range(3).map([](const Tensor& x) {
    if (x.item<int64_t>() == 1) throw OutOfRange("end of something");
    return x;
  });
  Iterator it = ds.make_iterator();
  EXPECT_TRUE(it.next().has_value());
  try {
    it.next();
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("Function invocation produced OutOfRangeError"),
              std::string::npos);
  }
  EXPECT_TRUE(it.next().has_value());
}

TEST(MapErrorTest, ForeignExceptionsArriveAsUnknown) {
  auto ds = Dataset::range(2).map([](Element) -> Element { throw std::runtime_error("bad"); });
  EXPECT_THROW(collect(ds), Unknown);
}

TEST(BatchErrorTest, MismatchedShapesNameComponentElementAndShapes) {
  // tf.data batch_test.testShapeError: elements of shape [3], [3], [4].
  auto ds = Dataset::range(3)
                .map([](const Tensor& x) {
                  return Tensor(DType::kInt64, {x.item<int64_t>() == 2 ? 4 : 3});
                })
                .batch(3);
  try {
    collect(ds);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(),
                 "Cannot batch tensors with different shapes in component 0. First element had "
                 "shape [3] and element 2 had shape [4].");
  }
}

TEST(BatchErrorTest, ABatchWithAFailedElementFailsAsAWholeAndAlignmentHolds) {
  auto ds = Dataset::range(8).map([](const Tensor& x) {
    if (x.item<int64_t>() == 2) throw DataLoss("bad record");
    return x;
  });
  for (int64_t parallel : {int64_t{0}, int64_t{2}}) {
    auto batched = Dataset::range(8)
                       .map(
                           [](const Tensor& x) {
                             if (x.item<int64_t>() == 2) throw DataLoss("bad record");
                             return x;
                           },
                           {.num_parallel_calls = parallel})
                       .batch(4)
                       .ignore_errors();
    auto out = collect(batched);
    ASSERT_EQ(out.size(), 1u) << "parallel=" << parallel;
    EXPECT_TRUE(out[0][0].equals(Tensor::from_vector<int64_t>({4, 5, 6, 7})));
  }
  EXPECT_THROW(collect(ds.batch(4)), DataLoss);
}

TEST(BatchErrorTest, LaterBatchesNameTheElementByItsIndexInTheInput) {
  // Shapes [3] except element 6: [4]. The second batch is elements 4..7.
  auto ds = Dataset::range(8)
                .map([](const Tensor& x) {
                  return Tensor(DType::kInt64, {x.item<int64_t>() == 6 ? 4 : 3});
                })
                .batch(4);
  const std::string expected =
      "Cannot batch tensors with different shapes in component 0. First element (element 4) "
      "had shape [3] and element 6 had shape [4].";
  EXPECT_EQ(testing::error_message(ds), expected);
  for (int n : {1, 2}) {
    auto fused = Dataset::range(8).map_and_batch(
        [](const Tensor& x) { return Tensor(DType::kInt64, {x.item<int64_t>() == 6 ? 4 : 3}); }, 4,
        false, {.num_parallel_calls = n});
    EXPECT_EQ(testing::error_message(fused, threads(n)), expected) << n << " threads";
  }
}

TEST(IteratorErrorTest, TakeAndShardPassErrorsWithoutCountingThem) {
  auto failing = Dataset::range(6).map([](const Tensor& x) {
    if (x.item<int64_t>() == 1) throw DataLoss("bad");
    return x;
  });
  EXPECT_EQ(ints(failing.ignore_errors().take(3)), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(ints(failing.take(3).ignore_errors()), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(ints(failing.shard(2, 0).ignore_errors()), (std::vector<int64_t>{0, 3, 5}));
}

TEST(InterleaveErrorTest, AFailingFunctionNamesItsElement) {
  auto ds = Dataset::range(3).interleave(
      [](const Tensor& x) -> Dataset {
        if (x.item<int64_t>() == 1) throw NotFound("no such file");
        return Dataset::range(2);
      },
      {.cycle_length = 1});
  Iterator it = ds.make_iterator();
  EXPECT_TRUE(it.next().has_value());
  EXPECT_TRUE(it.next().has_value());
  try {
    it.next();
    FAIL();
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find("interleave' at element 1"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(ints(ds.ignore_errors()).size(), 4u);
}

// Elements 0..n-1 as read from the file "numbers.bin": element i's origin is its record i.
Dataset numbers_from_a_file(int64_t n = 10) {
  Element all{Tensor::from_vector(testing::range_vector(n))};
  all.set_origin(ElementOrigin(std::make_shared<const std::string>("numbers.bin")));
  return Dataset::from_tensor_slices(std::move(all));
}

Element fail_on_7(Element e) {
  if (e[0].item<int64_t>() == 7) throw DataLoss("bad value");
  return e;
}

// A new element (no origin of its own), as most map functions return.
Element plus_one(const Element& e) {
  return Element{Tensor::scalar<int64_t>(e[0].item<int64_t>() + 1)};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(OriginTest, AMapErrorNamesWhereTheElementWasRead) {
  for (int64_t parallel : {int64_t{0}, int64_t{2}}) {
    const std::string message = testing::error_message(
        numbers_from_a_file().map(fail_on_7, {.num_parallel_calls = parallel}));
    EXPECT_TRUE(
        contains(message, "bad value [in stage 'map' at element 7, from numbers.bin record 7]"))
        << message;
  }
  // Inherited through a map whose function makes a new element, fused or not.
  Options unfused;
  unfused.static_optimizations = false;
  for (const Options& options : {Options(), unfused}) {
    const Dataset ds = numbers_from_a_file().map(plus_one).map([](Element e) {
      if (e[0].item<int64_t>() == 8) throw InvalidArgument("label 8 out of range");
      return e;
    });
    const std::string message = testing::error_message(ds, options);
    EXPECT_TRUE(contains(message, "element 7, from numbers.bin record 7]")) << message;
    const std::vector<Element> mapped = collect(numbers_from_a_file().map(plus_one), options);
    ASSERT_EQ(mapped.size(), 10u);
    EXPECT_EQ(mapped[3].origin().to_string(), "numbers.bin record 3");
  }
  // Without an origin the context is as before.
  EXPECT_TRUE(contains(testing::error_message(Dataset::range(9).map(fail_on_7)),
                       "bad value [in stage 'map' at element 7]"));
}

TEST(OriginTest, FilterInterleaveAndMapAndBatchNameTheOrigin) {
  const std::string filtered = testing::error_message(
      numbers_from_a_file().filter([](const Element& e) { return !fail_on_7(e).empty(); }));
  EXPECT_TRUE(contains(filtered, "[in stage 'filter' at element 7, from numbers.bin record 7]"))
      << filtered;
  for (int n : {1, 2}) {
    const std::string batched = testing::error_message(
        numbers_from_a_file().map_and_batch(fail_on_7, 4, false, {.num_parallel_calls = n}),
        threads(n));
    EXPECT_TRUE(
        contains(batched, "[in stage 'map_and_batch' at element 7, from numbers.bin record 7]"))
        << batched;
  }
  const std::string opened = testing::error_message(numbers_from_a_file().interleave(
      [](const Element& e) { return Dataset::from_tensors(fail_on_7(e)); }, {.cycle_length = 2}));
  EXPECT_TRUE(contains(opened, "[in stage 'interleave' at element 7, from numbers.bin record 7]"))
      << opened;
  // An interleave passes on the origins of its inner datasets' elements.
  const std::string inner = testing::error_message(
      Dataset::range(2)
          .interleave([](const Tensor&) { return numbers_from_a_file(); }, {.cycle_length = 2})
          .map(fail_on_7));
  EXPECT_TRUE(contains(inner, "[in stage 'map' at element 14, from numbers.bin record 7]"))
      << inner;
}

TEST(OriginTest, OriginSurvivesShuffleAndPrefetchAndBatchesHaveNone) {
  // After a shuffle the failing element's index in the map differs, its origin does not.
  for (int64_t parallel : {int64_t{0}, int64_t{2}}) {
    const std::string message =
        testing::error_message(numbers_from_a_file().shuffle(10, 3).prefetch(2).map(
            fail_on_7, {.num_parallel_calls = parallel}));
    EXPECT_TRUE(contains(message, ", from numbers.bin record 7]")) << message;
  }
  const Dataset kept =
      numbers_from_a_file().shuffle(10, 5).prefetch(3).map(plus_one).repeat(2).skip(1).take(15);
  int64_t seen = 0;
  for (const Element& e : kept) {
    EXPECT_EQ(e.origin().record(), e[0].item<int64_t>() - 1);
    EXPECT_EQ(e.origin().source(), "numbers.bin");
    ++seen;
  }
  EXPECT_EQ(seen, 15);
  // enumerate and zip (the first origin among the zipped elements) keep it too.
  for (const Element& e : Dataset::zip({Dataset::range(10), numbers_from_a_file().enumerate()})) {
    EXPECT_EQ(e.origin().record(), e[0].item<int64_t>());
  }
  for (const Element& batch : numbers_from_a_file().batch(4)) EXPECT_FALSE(batch.origin());
  // Not part of the value.
  EXPECT_TRUE(collect(numbers_from_a_file())[2].equals(collect(Dataset::range(10))[2]));
}

TEST(OriginTest, IgnoreErrorsStillSkipsTheFailedElement) {
  for (int64_t parallel : {int64_t{0}, int64_t{2}}) {
    EXPECT_EQ(
        ints(
            numbers_from_a_file().map(fail_on_7, {.num_parallel_calls = parallel}).ignore_errors()),
        (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 8, 9}));
  }
}

TEST(OriginTest, BatchShapeErrorsNameTheFiles) {
  const auto shape_of = [](const Tensor& x) {
    return Tensor(DType::kInt64, {x.item<int64_t>() == 6 ? 4 : 3});
  };
  const std::string expected =
      "Cannot batch tensors with different shapes in component 0. First element (element 4, from "
      "numbers.bin record 4) had shape [3] and element 6 (from numbers.bin record 6) had shape "
      "[4].";
  EXPECT_EQ(testing::error_message(numbers_from_a_file(8).map(shape_of).batch(4)), expected);
  for (int n : {1, 2}) {
    EXPECT_EQ(testing::error_message(numbers_from_a_file(8).map_and_batch(
                                         shape_of, 4, false, {.num_parallel_calls = n}),
                                     threads(n)),
              expected)
        << n << " threads";
  }
}

}  // namespace
}  // namespace sluice
