#include "sluice/core/element.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice {
namespace {

TEST(ElementTest, PositionalAndNamedAccess) {
  Element e{{"image", Tensor(DType::kUInt8, {2, 2})}, {"label", Tensor::scalar<int64_t>(3)}};
  EXPECT_EQ(e.size(), 2u);
  EXPECT_EQ(e[1].item<int64_t>(), 3);
  EXPECT_EQ(e["label"].item<int64_t>(), 3);
  EXPECT_EQ(e["image"].shape(), Shape({2, 2}));
  EXPECT_EQ(e.name(0), "image");
  EXPECT_TRUE(e.has("label"));
  EXPECT_FALSE(e.has("weight"));
  try {
    (void)e["weight"];
    FAIL();
  } catch (const NotFound& error) {
    EXPECT_NE(std::string(error.what()).find("image, label"), std::string::npos);
  }
}

TEST(ElementTest, UnnamedElementsHaveNoNames) {
  Element e{Tensor::scalar(1.0f)};
  EXPECT_FALSE(e.is_named());
  EXPECT_EQ(e.name(0), "");
  EXPECT_THROW((void)e["x"], NotFound);
}

TEST(ElementTest, PushBackNamesAndRejectsDuplicates) {
  Element e{Tensor::scalar(1.0f)};
  e.push_back(Tensor::scalar(2.0f), "y");
  EXPECT_EQ(e.name(0), "");
  EXPECT_EQ(e["y"].item<float>(), 2.0f);
  EXPECT_THROW(e.push_back(Tensor::scalar(3.0f), "y"), InvalidArgument);
  EXPECT_THROW((Element{{"a", Tensor()}, {"a", Tensor()}}), InvalidArgument);
}

TEST(ElementTest, EqualityComparesNamesAndValues) {
  Element a{{"x", Tensor::scalar<int64_t>(1)}};
  Element b{{"x", Tensor::scalar<int64_t>(1)}};
  Element c{{"y", Tensor::scalar<int64_t>(1)}};
  EXPECT_TRUE(a.equals(b));
  EXPECT_FALSE(a.equals(c));
  EXPECT_EQ(a.debug_string(), "(x: int64[] 1)");
}

// An element's tensors stay in order and contiguous as they grow past the one held inline, and
// copies and moves keep them, whichever way the list was made.
TEST(TensorListTest, GrowsPastTheInlineTensorAndKeepsOrder) {
  auto values = [](const TensorList& list) {
    std::vector<int64_t> out;
    for (const Tensor& t : list) out.push_back(t.item<int64_t>());
    return out;
  };
  TensorList grown;
  EXPECT_TRUE(grown.empty());
  EXPECT_EQ(grown.begin(), grown.end());
  for (int64_t i = 0; i < 5; ++i) {
    grown.push_back(Tensor::scalar(i));
    ASSERT_EQ(grown.size(), static_cast<size_t>(i + 1));
    EXPECT_EQ(grown.end() - grown.begin(), i + 1);
  }
  EXPECT_EQ(values(grown), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  TensorList reserved;
  reserved.reserve(3);
  reserved.push_back(Tensor::scalar<int64_t>(7));
  EXPECT_EQ(reserved[0].item<int64_t>(), 7);
  reserved.push_back(Tensor::scalar<int64_t>(8));
  EXPECT_EQ(values(reserved), (std::vector<int64_t>{7, 8}));

  const TensorList one(std::vector<Tensor>{Tensor::scalar<int64_t>(9)});
  const TensorList three{Tensor::scalar<int64_t>(1), Tensor::scalar<int64_t>(2),
                         Tensor::scalar<int64_t>(3)};
  for (const TensorList* list : {&one, &three, static_cast<const TensorList*>(&grown)}) {
    TensorList copy = *list;
    EXPECT_EQ(values(copy), values(*list));
    TensorList moved = std::move(copy);
    EXPECT_EQ(values(moved), values(*list));
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty.
    copy = moved;
    EXPECT_EQ(values(copy), values(*list));
  }
  // An element of one tensor keeps it inline: the element's own storage.
  const Element e{Tensor::scalar<int64_t>(5)};
  const auto* address = reinterpret_cast<const char*>(&e[0]);
  EXPECT_TRUE(address >= reinterpret_cast<const char*>(&e) &&
              address < reinterpret_cast<const char*>(&e) + sizeof(Element));
}

// An origin names a record of its source ("file record 3") or, from a text reader, a line
// ("file:3"); another record of the same origin keeps the kind.
TEST(ElementOriginTest, RecordsAndLines) {
  auto source = std::make_shared<const std::string>("data/a.csv");
  const ElementOrigin record(source, 3);
  EXPECT_EQ(record.to_string(), "data/a.csv record 3");
  EXPECT_FALSE(record.is_line());
  const ElementOrigin line = ElementOrigin::line(source, 12);
  EXPECT_EQ(line.to_string(), "data/a.csv:12");
  EXPECT_TRUE(line.is_line());
  EXPECT_EQ(line.record(), 12);
  EXPECT_EQ(line.at_record(13).to_string(), "data/a.csv:13");
  EXPECT_EQ(record.at_record(4).to_string(), "data/a.csv record 4");
  EXPECT_FALSE(ElementOrigin().is_line());
}

}  // namespace
}  // namespace sluice
