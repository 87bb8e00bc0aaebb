#include "sluice/core/tensor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sluice {
namespace {

TEST(ShapeTest, CountsElementsAndPrints) {
  EXPECT_EQ(Shape{}.num_elements(), 1);
  EXPECT_EQ(Shape({2, 3, 4}).num_elements(), 24);
  EXPECT_EQ(Shape({2, 0}).num_elements(), 0);
  EXPECT_EQ(Shape({2, 3}).to_string(), "[2, 3]");
  EXPECT_EQ(Shape{}.to_string(), "[]");
  EXPECT_EQ(Shape({3}).prepend(5), Shape({5, 3}));
  EXPECT_EQ(Shape({5, 3}).drop_first(), Shape({3}));
}

TEST(ShapeTest, RejectsNegativeDimsAndExcessRank) {
  EXPECT_THROW(Shape({2, -1}), InvalidArgument);
  EXPECT_THROW(Shape({1, 1, 1, 1, 1, 1, 1, 1, 1}), InvalidArgument);
  EXPECT_THROW(Shape({1, 1, 1, 1, 1, 1, 1, 1}).prepend(2), InvalidArgument);
}

TEST(TensorTest, ZeroInitialisedAndTyped) {
  Tensor t(DType::kFloat32, {2, 3});
  EXPECT_EQ(t.num_elements(), 6);
  EXPECT_EQ(t.byte_size(), 24u);
  for (float v : t.values<float>()) EXPECT_EQ(v, 0.0f);
  EXPECT_THROW(t.data<int32_t>(), InvalidArgument);
  Tensor s(DType::kString, {2});
  EXPECT_EQ(s.values<std::string>()[1], "");
}

TEST(TensorTest, BuffersAreSixtyFourByteAligned) {
  for (int n : {3, 17, 100, 1000}) {
    Tensor t(DType::kUInt8, {n});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u) << n;
  }
}

TEST(TensorTest, ScalarsAndItem) {
  EXPECT_EQ(Tensor::scalar<int64_t>(42).item<int64_t>(), 42);
  EXPECT_EQ(Tensor::scalar(2.5f).item<float>(), 2.5f);
  EXPECT_EQ(Tensor::scalar("bytes").item<std::string>(), "bytes");
  EXPECT_EQ(Tensor::scalar(bfloat16(1.5f)).dtype(), DType::kBFloat16);
  EXPECT_EQ(Tensor::scalar(0.25).item<double>(), 0.25);
  EXPECT_EQ(Tensor::scalar(float16(1.5f)).dtype(), DType::kFloat16);
  EXPECT_TRUE(Tensor::scalar(true).item<bool>());
  EXPECT_THROW(Tensor(DType::kInt64, {2}).item<int64_t>(), InvalidArgument);
}

TEST(TensorTest, Float64Float16AndBoolHaveTensorFlowsNamesSizesAndPrinting) {
  EXPECT_EQ(dtype_name(DType::kFloat64), "float64");
  EXPECT_EQ(dtype_name(DType::kFloat16), "float16");
  EXPECT_EQ(dtype_name(DType::kBool), "bool");
  EXPECT_EQ(dtype_size(DType::kFloat64), 8u);
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kBool), 1u);
  EXPECT_EQ(Tensor::from_vector<bool>({true, false}).debug_string(), "bool[2] [true, false]");
  EXPECT_EQ(Tensor::from_vector<float16>({float16(0.5f)}).debug_string(), "float16[1] [0.5]");
  EXPECT_EQ(Tensor::from_vector<double>({0.125, 2}).debug_string(), "float64[2] [0.125, 2]");
  // Values beyond float32's precision survive.
  EXPECT_EQ(Tensor::scalar(1.0 + 1e-12).item<double>(), 1.0 + 1e-12);
}

TEST(TensorTest, CopiesShareTheBuffer) {
  Tensor a = Tensor::from_vector<int32_t>({1, 2, 3, 4});
  Tensor b = a;
  EXPECT_TRUE(a.shares_buffer_with(b));
  b.data<int32_t>()[0] = 9;
  EXPECT_EQ(a.data<int32_t>()[0], 9);
  Tensor c = a.clone();
  EXPECT_FALSE(c.shares_buffer_with(a));
  c.data<int32_t>()[1] = 7;
  EXPECT_EQ(a.data<int32_t>()[1], 2);
}

TEST(TensorTest, SlicingAlongTheFirstDimensionIsZeroCopy) {
  Tensor m = Tensor::from_vector<float>({0, 1, 2, 3, 4, 5, 6, 7}, Shape{4, 2});
  Tensor rows = m.slice(1, 3);
  EXPECT_EQ(rows.shape(), Shape({2, 2}));
  EXPECT_TRUE(rows.shares_buffer_with(m));
  EXPECT_EQ(rows.values<float>()[0], 2);
  EXPECT_EQ(rows.values<float>()[3], 5);
  Tensor row = m.select(3);
  EXPECT_EQ(row.shape(), Shape({2}));
  EXPECT_TRUE(row.shares_buffer_with(m));
  EXPECT_EQ(row.values<float>()[1], 7);
  EXPECT_THROW(m.slice(2, 5), InvalidArgument);
  EXPECT_THROW(m.select(4), InvalidArgument);
  EXPECT_THROW(Tensor::scalar(1.0f).slice(0, 1), InvalidArgument);
}

TEST(TensorTest, StringSlicesAndSelect) {
  Tensor s = Tensor::from_strings({"a", "bb", "ccc"});
  EXPECT_EQ(s.select(1).item<std::string>(), "bb");
  EXPECT_EQ(s.slice(1, 3).values<std::string>()[1], "ccc");
}

TEST(TensorTest, ReshapeKeepsDataAndChecksCount) {
  Tensor t = Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6});
  Tensor r = t.reshape({2, 3});
  EXPECT_TRUE(r.shares_buffer_with(t));
  EXPECT_EQ(r.matrix<int64_t>()(1, 0), 4);
  EXPECT_THROW(t.reshape({4}), InvalidArgument);
  EXPECT_THROW(t.matrix<int64_t>(), InvalidArgument);
}

TEST(TensorTest, EigenViewsWriteThrough) {
  Tensor t(DType::kFloat32, {2, 2});
  t.matrix<float>() << 1, 2, 3, 4;
  EXPECT_EQ(t.values<float>()[2], 3);
  t.flat<float>() *= 2.0f;
  EXPECT_EQ(t.values<float>()[3], 8);
  EXPECT_FLOAT_EQ(t.flat<float>().sum(), 20.0f);
}

TEST(TensorTest, ExternalMemoryIsReleasedWithTheLastReference) {
  static std::atomic<int> released{0};
  std::vector<float> storage = {1, 2, 3};
  {
    Tensor t = Tensor::from_external(DType::kFloat32, {3}, storage.data(), [] { ++released; });
    Tensor slice = t.slice(1, 3);
    t = Tensor();
    EXPECT_EQ(released.load(), 0);
    EXPECT_EQ(slice.values<float>()[0], 2);
  }
  EXPECT_EQ(released.load(), 1);
}

TEST(TensorTest, EqualsAndDebugString) {
  Tensor a = Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_TRUE(a.equals(a.clone()));
  EXPECT_FALSE(a.equals(a.reshape({3, 2})));
  EXPECT_EQ(a.debug_string(), "int64[2, 3] [[1, 2, 3], [4, 5, 6]]");
  EXPECT_EQ(Tensor::from_vector<int64_t>({1, 2, 3, 4}).debug_string(2), "int64[4] [1, 2, ...]");
  EXPECT_EQ(Tensor::scalar("x").debug_string(), "string[] \"x\"");
  EXPECT_EQ(Tensor::scalar<uint8_t>(200).debug_string(), "uint8[] 200");
}

TEST(PackedStringsTest, HoldCopiesOfTheViewsInOneBuffer) {
  std::string source = "alpha";
  const std::string_view nul("n\0l", 3);
  const std::vector<std::string_view> views = {source, "", nul, "delta"};
  const Tensor t = Tensor::from_string_views(views, Shape{2, 2});
  source[0] = 'X';  // The tensor copied the bytes.
  EXPECT_EQ(t.dtype(), DType::kString);
  EXPECT_EQ(t.shape(), Shape({2, 2}));
  const StringElements s = t.strings();
  ASSERT_EQ(s.size(), 4);
  EXPECT_EQ(s[0], "alpha");
  EXPECT_EQ(s[1], "");
  EXPECT_EQ(s[2], nul);
  EXPECT_EQ(s[3], "delta");
  // Element bytes lie back to back in one block.
  EXPECT_EQ(s[2].data(), s[0].data() + 5);
  EXPECT_EQ(std::vector<std::string_view>(s.begin(), s.end()),
            (std::vector<std::string_view>{"alpha", "", nul, "delta"}));
  EXPECT_THROW(Tensor::from_string_views(views, Shape{3}), InvalidArgument);
  EXPECT_THROW(Tensor::from_vector<int32_t>({1}).strings(), InvalidArgument);
}

TEST(PackedStringsTest, SliceSelectAndStdStringAccess) {
  const std::vector<std::string_view> views = {"a", "bb", "ccc", "dddd", "eeeee", "ffffff"};
  const Tensor t = Tensor::from_string_views(views, Shape{3, 2});
  const Tensor row = t.select(1);
  EXPECT_TRUE(row.shares_buffer_with(t));
  EXPECT_EQ(row.shape(), Shape({2}));
  EXPECT_EQ(row.strings()[0], "ccc");
  EXPECT_EQ(row.strings()[1], "dddd");
  EXPECT_EQ(t.slice(2, 3).strings()[1], "ffffff");
  // The std::string API works on packed tensors too, element for element.
  EXPECT_EQ(row.values<std::string>()[1], "dddd");
  EXPECT_EQ(t.select(2).select(0).item<std::string>(), "eeeee");
  EXPECT_EQ(t.data<std::string>()[0], "a");
  // A write through data<std::string>() is what later readers see, through either API.
  Tensor writable = t;
  writable.data<std::string>()[3] = "changed";
  EXPECT_EQ(t.strings()[3], "changed");
  EXPECT_EQ(t.select(1).values<std::string>()[1], "changed");
}

TEST(PackedStringsTest, EqualCloneAndPrintLikeStdStringTensors) {
  const Tensor packed = Tensor::from_string_views(std::vector<std::string_view>{"x", "yz"});
  const Tensor plain = Tensor::from_strings({"x", "yz"});
  EXPECT_TRUE(packed.equals(plain));
  EXPECT_TRUE(plain.equals(packed));
  EXPECT_FALSE(packed.equals(Tensor::from_strings({"x", "y"})));
  EXPECT_EQ(packed.debug_string(), "string[2] [\"x\", \"yz\"]");
  EXPECT_EQ(packed.debug_string(), plain.debug_string());
  const Tensor copy = packed.clone();
  EXPECT_FALSE(copy.shares_buffer_with(packed));
  EXPECT_TRUE(copy.equals(packed));
  // strings() of a std::string tensor views its elements in place.
  EXPECT_EQ(plain.strings()[1].data(), plain.data<std::string>()[1].data());
  const Tensor empty = Tensor::from_string_views(std::span<const std::string_view>{});
  EXPECT_EQ(empty.num_elements(), 0);
  EXPECT_EQ(empty.strings().size(), 0);
}

TEST(PackedStringsTest, ViewsOfAPackedTensorShareItsBytesAndKeepThemAlive) {
  const std::vector<std::string_view> records = {"key=alpha;", "key=beta;", "key=;"};
  Tensor source = Tensor::from_string_views(records);
  const StringElements s = source.strings();
  const std::vector<std::string_view> fields = {s[0].substr(4, 5), s[1].substr(4, 4),
                                                s[2].substr(4, 0), s[1]};
  const char* beta = fields[1].data();
  Tensor shared = Tensor::from_string_views_of(source, fields, Shape{2, 2});
  EXPECT_EQ(shared.shape(), Shape({2, 2}));
  EXPECT_EQ(shared.strings()[1].data(), beta);  // Not copied.
  // Views of the shared tensor hold the same bytes, which outlive both tensors they came from.
  Tensor twice = Tensor::from_string_views_of(
      shared, std::vector<std::string_view>{shared.strings()[1].substr(1)}, Shape{});
  EXPECT_EQ(twice.strings()[0].data(), beta + 1);
  source = Tensor();
  shared = Tensor();
  EXPECT_EQ(twice.item<std::string>(), "eta");
  // A write through the std::string API changes that tensor's copy only, as for any packed one.
  twice.data<std::string>()[0] = "changed";
  EXPECT_EQ(twice.strings()[0], "changed");
  EXPECT_EQ(std::string_view(beta + 1, 3), "eta");
}

TEST(PackedStringsTest, ViewsThatCannotBeSharedAreCopied) {
  const Tensor packed = Tensor::from_string_views(std::vector<std::string_view>{"alpha", "beta"});
  const std::string outside = "outside";
  // A value outside the source's bytes makes the whole tensor a copy.
  const std::vector<std::string_view> mixed = {packed.strings()[0], outside};
  const Tensor copied = Tensor::from_string_views_of(packed, mixed, Shape{2});
  EXPECT_NE(copied.strings()[0].data(), packed.strings()[0].data());
  EXPECT_EQ(copied.strings()[1], "outside");
  // So do the values of a std::string tensor (writable in place) and of a packed tensor whose
  // std::strings were made (views of those, not of its bytes).
  const Tensor plain = Tensor::from_strings({"gamma"});
  const std::vector<std::string_view> of_plain = {plain.strings()[0]};
  EXPECT_NE(Tensor::from_string_views_of(plain, of_plain, Shape{}).strings()[0].data(),
            plain.strings()[0].data());
  const Tensor materialized = Tensor::from_string_views(std::vector<std::string_view>{"delta"});
  (void)materialized.data<std::string>();
  const std::vector<std::string_view> of_materialized = {materialized.strings()[0]};
  const Tensor copy = Tensor::from_string_views_of(materialized, of_materialized, Shape{});
  EXPECT_NE(copy.strings()[0].data(), materialized.strings()[0].data());
  EXPECT_EQ(copy.item<std::string>(), "delta");
  EXPECT_THROW(Tensor::from_string_views_of(packed, mixed, Shape{3}), InvalidArgument);
}

TEST(PackedStringsTest, ConcurrentFirstStdStringAccessAgrees) {
  std::vector<std::string> values;
  for (int i = 0; i < 1000; ++i) values.emplace_back(static_cast<size_t>(i % 50), 'a' + i % 26);
  const std::vector<std::string_view> views(values.begin(), values.end());
  for (int round = 0; round < 20; ++round) {
    const Tensor t = Tensor::from_string_views(views);
    std::vector<const std::string*> seen(4);
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; ++k) threads.emplace_back([&, k] { seen[k] = t.data<std::string>(); });
    for (auto& thread : threads) thread.join();
    for (int k = 1; k < 4; ++k) EXPECT_EQ(seen[k], seen[0]);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(seen[0][i], values[i]);
  }
}

TEST(TensorTest, MoveLeavesNothingBehind) {
  Tensor a = Tensor::from_vector<int32_t>({5, 6});
  Tensor b = std::move(a);
  EXPECT_EQ(b.values<int32_t>()[1], 6);
  Tensor c;
  c = std::move(b);
  EXPECT_EQ(c.values<int32_t>()[0], 5);
}

}  // namespace
}  // namespace sluice

#include "sluice/core/tensor_map.h"

namespace sluice {
namespace {

TEST(TensorMapTest, NDimensionalViewsShareMemory) {
  Tensor t(DType::kFloat32, {2, 3, 4});
  auto view = eigen_tensor<float, 3>(t);
  view(1, 2, 3) = 5.0f;
  EXPECT_EQ(t.values<float>()[1 * 12 + 2 * 4 + 3], 5.0f);
  const Tensor& ct = t;
  EXPECT_EQ((eigen_tensor<float, 3>(ct)(1, 2, 3)), 5.0f);
  EXPECT_THROW((eigen_tensor<float, 2>(t)), InvalidArgument);
  EXPECT_THROW((eigen_tensor<int32_t, 3>(t)), InvalidArgument);
}

}  // namespace
}  // namespace sluice
