#include <gtest/gtest.h>

#include "tests/dataset/testing.h"

namespace sluice {
namespace {

using testing::expect_dataset;
using testing::I;
using testing::Is;

TEST(RangeTest, MatchesPythonRange) {
  expect_dataset(Dataset::range(5), Is({0, 1, 2, 3, 4}));
  expect_dataset(Dataset::range(2, 11, 3), Is({2, 5, 8}));
  expect_dataset(Dataset::range(5, 0, -2), Is({5, 3, 1}));
  expect_dataset(Dataset::range(3, 3), {});
  EXPECT_EQ(Dataset::range(0, 10, 4).cardinality(), 3);
  EXPECT_THROW(Dataset::range(0, 10, 0), InvalidArgument);
}

TEST(FromTensorsTest, OneElement) {
  Element e{{"x", Tensor::from_vector<float>({1, 2})}, {"y", Tensor::scalar("a")}};
  expect_dataset(Dataset::from_tensors(e), {e});
}

TEST(FromTensorSlicesTest, SlicesEveryComponentAlongDimZeroKeepingNames) {
  Element components{{"x", Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6}, Shape{3, 2})},
                     {"label", Tensor::from_strings({"a", "b", "c"})}};
  std::vector<Element> expected;
  for (int i = 0; i < 3; ++i) {
    expected.push_back(
        Element{{"x", Tensor::from_vector<int64_t>({2 * i + 1, 2 * i + 2})},
                {"label", Tensor::scalar(std::string(1, static_cast<char>('a' + i)))}});
  }
  expect_dataset(Dataset::from_tensor_slices(components), expected);
  auto first = Dataset::from_tensor_slices(components).make_iterator().next();
  EXPECT_TRUE((*first)[0].shares_buffer_with(components[0])) << "slices must not copy";
}

TEST(FromTensorSlicesTest, RejectsMismatchedFirstDimensionsAndScalars) {
  EXPECT_THROW(Dataset::from_tensor_slices(Element{Tensor::from_vector<int64_t>({1, 2}),
                                                   Tensor::from_vector<int64_t>({1, 2, 3})}),
               InvalidArgument);
  EXPECT_THROW(Dataset::from_tensor_slices(Element{Tensor::scalar(1.0f)}), InvalidArgument);
}

TEST(FromGeneratorTest, FreshGeneratorPerIterator) {
  auto ds = Dataset::from_generator([] {
    return [i = 0]() mutable -> std::optional<Element> {
      if (i == 4) return std::nullopt;
      return I(i++ * 10);
    };
  });
  EXPECT_EQ(ds.cardinality(), kUnknownCardinality);
  expect_dataset(ds, Is({0, 10, 20, 30}));
  expect_dataset(ds.repeat(2), Is({0, 10, 20, 30, 0, 10, 20, 30}));
}

TEST(FromGeneratorTest, AThrowingGeneratorReportsAndEnds) {
  auto ds = Dataset::from_generator([] {
    return [i = 0]() mutable -> std::optional<Element> {
      if (i == 2) throw DataLoss("generator broke");
      return I(i++);
    };
  });
  Iterator it = ds.make_iterator();
  EXPECT_EQ(it.next()->operator[](0).item<int64_t>(), 0);
  EXPECT_EQ(it.next()->operator[](0).item<int64_t>(), 1);
  EXPECT_THROW(it.next(), DataLoss);
  EXPECT_FALSE(it.next().has_value());
}

TEST(RangeForTest, IteratesTheWholeDataset) {
  int64_t sum = 0;
  for (const Element& e : Dataset::range(101)) sum += e[0].item<int64_t>();
  EXPECT_EQ(sum, 5050);
}

}  // namespace
}  // namespace sluice
