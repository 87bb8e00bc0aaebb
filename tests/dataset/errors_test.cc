#include <gtest/gtest.h>

#include <cmath>

#include "tests/dataset/testing.h"

namespace sluice {
namespace {

using testing::collect;
using testing::ints;

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
    Iterator it = numbers_with_nan().map(check_numerics, {.num_parallel_calls = parallel}).make_iterator();
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
    auto ds = numbers_with_nan().map(check_numerics, {.num_parallel_calls = parallel}).ignore_errors();
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
                       .map([](const Tensor& x) {
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
  auto ds = Dataset::range(3).interleave([](const Tensor& x) -> Dataset {
    if (x.item<int64_t>() == 1) throw NotFound("no such file");
    return Dataset::range(2);
  }, {.cycle_length = 1});
  Iterator it = ds.make_iterator();
  EXPECT_TRUE(it.next().has_value());
  EXPECT_TRUE(it.next().has_value());
  try {
    it.next();
    FAIL();
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find("interleave' at element 1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ints(ds.ignore_errors()).size(), 4u);
}

}  // namespace
}  // namespace sluice
