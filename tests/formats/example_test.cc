#include "sluice/formats/example.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/formats/proto/example.pb.h"

namespace sluice {
namespace {

using tensorflow::Example;

// Builds Examples with the generated protobuf classes: the reference encoder.
class ExampleBuilder {
 public:
  ExampleBuilder& ints(const std::string& key, std::vector<int64_t> values) {
    auto* list = feature(key).mutable_int64_list();
    for (int64_t v : values) list->add_value(v);
    return *this;
  }
  ExampleBuilder& floats(const std::string& key, std::vector<float> values) {
    auto* list = feature(key).mutable_float_list();
    for (float v : values) list->add_value(v);
    return *this;
  }
  ExampleBuilder& bytes(const std::string& key, std::vector<std::string> values) {
    auto* list = feature(key).mutable_bytes_list();
    for (auto& v : values) list->add_value(v);
    return *this;
  }
  ExampleBuilder& kind_not_set(const std::string& key) {
    feature(key);
    return *this;
  }
  std::string serialized() const { return example_.SerializeAsString(); }

 private:
  tensorflow::Feature& feature(const std::string& key) {
    return (*example_.mutable_features()->mutable_feature())[key];
  }
  Example example_;
};

// Expects InvalidArgument whose message contains every one of `parts`.
template <class F>
void expect_invalid(F f, std::vector<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    for (const auto& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << part << "' not in: " << e.what();
    }
  }
}

TEST(ParseExample, EveryFeatureTypeFixedLen) {
  const std::string s = ExampleBuilder()
                            .ints("i", {7, -3, INT64_MIN})
                            .floats("f", {1.5f, -2.25f, 3.0f, 4.0f})
                            .bytes("b", {std::string("a\0b", 3)})
                            .ints("scalar", {42})
                            .serialized();
  const FeatureSpec spec = {
      {"i", FixedLenFeature{Shape{3}, DType::kInt64}},
      {"f", FixedLenFeature{Shape{2, 2}, DType::kFloat32}},
      {"b", FixedLenFeature{Shape{}, DType::kString}},
      {"scalar", FixedLenFeature{Shape{}, DType::kInt64}},
  };
  const Element e = parse_single_example(s, spec);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e.name(0), "b");  // Key order.
  EXPECT_TRUE(e["i"].equals(Tensor::from_vector<int64_t>({7, -3, INT64_MIN})));
  EXPECT_TRUE(e["f"].equals(Tensor::from_vector<float>({1.5f, -2.25f, 3.0f, 4.0f}, Shape{2, 2})));
  EXPECT_EQ(e["b"].shape(), Shape{});
  EXPECT_EQ(e["b"].item<std::string>(), std::string("a\0b", 3));
  EXPECT_EQ(e["scalar"].item<int64_t>(), 42);
}

TEST(ParseExample, EveryFeatureTypeVarLen) {
  const std::string s = ExampleBuilder()
                            .ints("i", {1, 2, 3, -1})
                            .floats("f", {})
                            .bytes("b", {"x", "", "zz"})
                            .serialized();
  const FeatureSpec spec = {
      {"i", VarLenFeature{DType::kInt64}},
      {"f", VarLenFeature{DType::kFloat32}},
      {"b", VarLenFeature{DType::kString}},
      {"absent", VarLenFeature{DType::kString}},
  };
  const Element e = parse_single_example(s, spec);
  EXPECT_TRUE(e["i"].equals(Tensor::from_vector<int64_t>({1, 2, 3, -1})));
  EXPECT_EQ(e["f"].shape(), Shape{0});
  EXPECT_TRUE(e["b"].equals(Tensor::from_strings({"x", "", "zz"})));
  EXPECT_EQ(e["absent"].shape(), Shape{0});
  EXPECT_EQ(e["absent"].dtype(), DType::kString);
}

TEST(ParseExample, BatchShapesAndRowLengths) {
  std::vector<std::string> batch = {
      ExampleBuilder().ints("label", {1}).floats("v", {1, 2}).bytes("t", {"a"}).serialized(),
      ExampleBuilder().ints("label", {2}).floats("v", {}).serialized(),
      ExampleBuilder().ints("label", {3}).floats("v", {3}).bytes("t", {"b", "c"}).serialized(),
  };
  const FeatureSpec spec = {
      {"label", FixedLenFeature{Shape{}, DType::kInt64}},
      {"v", VarLenFeature{DType::kFloat32}},
      {"t", VarLenFeature{DType::kString}},
  };
  const Element e = parse_example(batch, spec);
  ASSERT_EQ(e.size(), 5u);
  EXPECT_TRUE(e["label"].equals(Tensor::from_vector<int64_t>({1, 2, 3})));
  EXPECT_TRUE(e["v"].equals(Tensor::from_vector<float>({1, 2, 3})));
  EXPECT_TRUE(e["v/row_lengths"].equals(Tensor::from_vector<int64_t>({2, 0, 1})));
  EXPECT_TRUE(e["t"].equals(Tensor::from_strings({"a", "b", "c"})));
  EXPECT_TRUE(e["t/row_lengths"].equals(Tensor::from_vector<int64_t>({1, 0, 2})));

  std::vector<std::string_view> views(batch.begin(), batch.end());
  EXPECT_TRUE(parse_example(views, spec).equals(e));
  // An empty batch gives empty tensors of the right shapes.
  const Element none = parse_example(std::span<const std::string>(), spec);
  EXPECT_EQ(none["label"].shape(), Shape{0});
  EXPECT_EQ(none["v/row_lengths"].shape(), Shape{0});
}

TEST(ParseExample, StringsOfABatchArePackedCopies) {
  std::vector<std::string> batch = {
      ExampleBuilder().bytes("image", {"first"}).bytes("tags", {"x", "yy"}).serialized(),
      ExampleBuilder().bytes("tags", {"zzz"}).serialized(),
      ExampleBuilder().bytes("image", {std::string(3000, 'i')}).serialized(),
  };
  const FeatureSpec spec = {
      {"image", FixedLenFeature{Shape{}, DType::kString, Tensor::scalar("none")}},
      {"tags", VarLenFeature{DType::kString}},
  };
  const Element e = parse_example(batch, spec);
  for (std::string& s : batch) std::fill(s.begin(), s.end(), '\0');  // The output owns its bytes.
  const StringElements image = e["image"].strings();
  ASSERT_EQ(image.size(), 3);
  EXPECT_EQ(image[0], "first");
  EXPECT_EQ(image[1], "none");
  EXPECT_EQ(image[2], std::string(3000, 'i'));
  // One buffer per feature: the records' values lie back to back.
  EXPECT_EQ(image[1].data(), image[0].data() + 5);
  EXPECT_EQ(image[2].data(), image[1].data() + 4);
  EXPECT_TRUE(e["tags"].equals(Tensor::from_strings({"x", "yy", "zzz"})));
  EXPECT_EQ(e["image"].select(2).item<std::string>(), std::string(3000, 'i'));
}

TEST(ParseExample, ABatchTensorsStringsShareItsBytes) {
  const std::vector<std::string> batch = {
      ExampleBuilder()
          .bytes("image", {"first"})
          .bytes("tags", {"x", "yy"})
          .ints("l", {4})
          .serialized(),
      ExampleBuilder().bytes("image", {std::string(3000, 'i')}).ints("l", {5}).serialized(),
  };
  const FeatureSpec spec = {
      {"image", FixedLenFeature{Shape{}, DType::kString}},
      {"l", FixedLenFeature{Shape{}, DType::kInt64}},
      {"tags", VarLenFeature{DType::kString}},
  };
  const std::vector<std::string_view> views(batch.begin(), batch.end());
  Tensor records = Tensor::from_string_views(views);  // As batch() packs string scalars.
  const StringElements packed = records.strings();
  const Element e = parse_example(records, spec, 10);
  EXPECT_TRUE(e.equals(parse_example(batch, spec, 10)));
  // Each value lies inside its record's bytes: nothing was copied.
  const auto inside = [](std::string_view value, std::string_view record) {
    return value.data() >= record.data() && value.data() + value.size() <= record.end();
  };
  EXPECT_TRUE(inside(e["image"].strings()[0], packed[0]));
  EXPECT_TRUE(inside(e["image"].strings()[1], packed[1]));
  EXPECT_TRUE(inside(e["tags"].strings()[1], packed[0]));
  records = Tensor();  // The values keep the records' bytes.
  EXPECT_EQ(e["image"].strings()[1], std::string(3000, 'i'));
  EXPECT_EQ(e["tags"].strings()[1], "yy");

  // Records in std::strings (writable in place) are copied; so is a batch whose value comes from
  // the spec's default.
  const Tensor plain = Tensor::from_strings(batch);
  EXPECT_FALSE(inside(parse_example(plain, spec)["image"].strings()[0], plain.strings()[0]));
  const FeatureSpec with_default = {
      {"image", FixedLenFeature{Shape{}, DType::kString, Tensor::scalar("none")}},
      {"missing", FixedLenFeature{Shape{}, DType::kString, Tensor::scalar("none")}}};
  const Tensor again = Tensor::from_string_views(views);
  const Element d = parse_example(again, with_default);
  EXPECT_TRUE(inside(d["image"].strings()[1], again.strings()[1]));
  EXPECT_EQ(d["missing"].strings()[1], "none");
  expect_invalid(
      [&] {
        parse_example(again.reshape(Shape{1, 2}), spec);
      },
      {"vector of strings", "[1, 2]"});
  expect_invalid([&] { parse_example(Tensor::from_vector<int64_t>({1}), spec); },
                 {"vector of strings", "int64"});
}

TEST(ParseExample, MissingFeaturesAndDefaults) {
  const std::string s = ExampleBuilder().ints("present", {1}).serialized();
  FeatureSpec spec = {
      {"full_default",
       FixedLenFeature{Shape{2}, DType::kFloat32, Tensor::from_vector<float>({0.5f, 0.25f})}},
      {"broadcast", FixedLenFeature{Shape{3}, DType::kInt64, Tensor::scalar<int64_t>(-1)}},
      {"text", FixedLenFeature{Shape{}, DType::kString, Tensor::scalar("none")}},
      {"present", FixedLenFeature{Shape{}, DType::kInt64, Tensor::scalar<int64_t>(9)}},
  };
  const Element e = parse_single_example(s, spec);
  EXPECT_TRUE(e["full_default"].equals(Tensor::from_vector<float>({0.5f, 0.25f})));
  EXPECT_TRUE(e["broadcast"].equals(Tensor::from_vector<int64_t>({-1, -1, -1})));
  EXPECT_EQ(e["text"].item<std::string>(), "none");
  EXPECT_EQ(e["present"].item<int64_t>(), 1);  // Present: the default does not apply.

  spec.emplace("required", FixedLenFeature{Shape{}, DType::kFloat32});
  expect_invalid([&] { parse_single_example(s, spec, 17); },
                 {"'required'", "record 17", "missing"});
  std::vector<std::string> batch = {ExampleBuilder().floats("required", {1}).serialized(), s};
  expect_invalid([&] { parse_example(batch, spec, 40); }, {"'required'", "record 41"});
}

TEST(ParseExample, WrongTypeAndWrongSize) {
  const std::string s = ExampleBuilder().floats("x", {1, 2}).serialized();
  expect_invalid(
      [&] {
        parse_single_example(s, {{"x", FixedLenFeature{Shape{2}, DType::kInt64}}}, 3);
      },
      {"'x'", "record 3", "float_list", "int64"});
  expect_invalid(
      [&] {
        parse_single_example(s, {{"x", VarLenFeature{DType::kString}}});
      },
      {"'x'", "float_list", "string"});
  expect_invalid(
      [&] {
        parse_single_example(s, {{"x", FixedLenFeature{Shape{3}, DType::kFloat32}}}, 5);
      },
      {"'x'", "record 5", "expected 3", "got 2"});
  expect_invalid(
      [&] {
        parse_single_example(s, {{"x", FixedLenFeature{Shape{}, DType::kFloat32}}});
      },
      {"'x'", "expected 1", "got 2"});
}

TEST(ParseExample, KindNotSetIsAnEmptyValue) {
  const std::string s = ExampleBuilder().kind_not_set("k").serialized();
  EXPECT_EQ(parse_single_example(s, {{"k", VarLenFeature{DType::kInt64}}})["k"].shape(), Shape{0});
  EXPECT_EQ(parse_single_example(s, {{"k", VarLenFeature{DType::kString}}})["k"].shape(), Shape{0});
  EXPECT_EQ(parse_single_example(
                s, {{"k", FixedLenFeature{Shape{}, DType::kFloat32, Tensor::scalar(2.5f)}}})["k"]
                .item<float>(),
            2.5f);
  EXPECT_EQ(
      parse_single_example(s, {{"k", FixedLenFeature{Shape{0}, DType::kFloat32}}})["k"].shape(),
      Shape{0});
  expect_invalid(
      [&] {
        parse_single_example(s, {{"k", FixedLenFeature{Shape{}, DType::kFloat32}}}, 2);
      },
      {"'k'", "record 2", "KIND_NOT_SET"});
  // A map entry with no value at all is an empty Feature too: {1: "k"}.
  const std::string entry = std::string("\x0a\x03\x0a\x01k", 5);
  const std::string no_value = "\x0a" + std::string(1, char(entry.size() + 2)) + "\x0a" +
                               std::string(1, char(entry.size())) + entry;
  EXPECT_EQ(parse_single_example(no_value, {{"k", VarLenFeature{DType::kFloat32}}})["k"].shape(),
            Shape{0});
}

// Wire-format helpers for encodings the protobuf classes do not produce.
std::string varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
std::string field(int number, int wire, const std::string& payload) {
  std::string out = varint(static_cast<uint64_t>(number) << 3 | wire);
  if (wire == 2) out += varint(payload.size());
  return out + payload;
}
std::string fixed32(float f) {
  std::string out(4, '\0');
  std::memcpy(out.data(), &f, 4);
  return out;
}
std::string example_of(const std::vector<std::pair<std::string, std::string>>& features) {
  std::string map;
  for (const auto& [key, feature] : features) {
    map += field(1, 2, field(1, 2, key) + field(2, 2, feature));
  }
  return field(1, 2, map);
}

TEST(ParseExample, UnpackedEncodingsAreAccepted) {
  const std::string floats = field(2, 2, field(1, 5, fixed32(1.5f)) + field(1, 5, fixed32(-2)));
  const std::string ints = field(3, 2, field(1, 0, varint(5)) + field(1, 0, varint(uint64_t(-7))));
  // Packed and unpacked runs mixed in one list, as a merge of two messages would give.
  const std::string mixed =
      field(3, 2, field(1, 2, varint(1) + varint(2)) + field(1, 0, varint(3)));
  const std::string s = example_of({{"f", floats}, {"i", ints}, {"m", mixed}});
  const FeatureSpec spec = {
      {"f", FixedLenFeature{Shape{2}, DType::kFloat32}},
      {"i", VarLenFeature{DType::kInt64}},
      {"m", FixedLenFeature{Shape{3}, DType::kInt64}},
  };
  const Element e = parse_single_example(s, spec);
  EXPECT_TRUE(e["f"].equals(Tensor::from_vector<float>({1.5f, -2.0f})));
  EXPECT_TRUE(e["i"].equals(Tensor::from_vector<int64_t>({5, -7})));
  EXPECT_TRUE(e["m"].equals(Tensor::from_vector<int64_t>({1, 2, 3})));
  // protobuf agrees.
  Example reference;
  ASSERT_TRUE(reference.ParseFromString(s));
  EXPECT_EQ(reference.features().feature().at("i").int64_list().value(1), -7);
}

TEST(ParseExample, DuplicatesAndUnknownFieldsFollowProtobuf) {
  const std::string first = field(3, 2, field(1, 2, varint(1)));
  const std::string second = field(3, 2, field(1, 2, varint(2)));
  // Unknown fields at every level: in Example, in the map entry, in Feature and in the list.
  const std::string noisy =
      field(3, 2, field(1, 2, varint(3)) + field(9, 0, varint(1))) + field(7, 5, "abcd");
  std::string s = example_of({{"d", first}, {"d", second}, {"n", noisy}}) +
                  field(15, 2, "ignored") + field(2, 1, "12345678");
  const FeatureSpec spec = {{"d", FixedLenFeature{Shape{}, DType::kInt64}},
                            {"n", FixedLenFeature{Shape{}, DType::kInt64}}};
  const Element e = parse_single_example(s, spec);
  EXPECT_EQ(e["d"].item<int64_t>(), 2);  // Last wins.
  EXPECT_EQ(e["n"].item<int64_t>(), 3);
  Example reference;
  ASSERT_TRUE(reference.ParseFromString(s));
  EXPECT_EQ(reference.features().feature().at("d").int64_list().value(0), 2);
  // A repeated `features` field merges its maps.
  const std::string merged = example_of({{"d", first}}) + example_of({{"n", second}});
  const Element m = parse_single_example(merged, spec);
  EXPECT_EQ(m["d"].item<int64_t>(), 1);
  EXPECT_EQ(m["n"].item<int64_t>(), 2);
}

TEST(ParseExample, MalformedBytesAreInvalidArgument) {
  const std::string good = ExampleBuilder().ints("x", {1, 2, 300}).serialized();
  const FeatureSpec spec = {{"x", VarLenFeature{DType::kInt64}}};
  for (size_t cut = 1; cut < good.size(); ++cut) {
    std::vector<std::string> batch = {good, good.substr(0, cut)};
    try {
      parse_example(batch, spec);
      // Some prefixes are themselves valid messages; never a crash or garbage beyond them.
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("record 1"), std::string::npos) << e.what();
    }
  }
  expect_invalid([&] { parse_single_example("\xff\xff\xff", spec, 8); }, {"record 8"});
}

TEST(ParseExample, BadSpecsAreInvalidArgument) {
  const std::string s = ExampleBuilder().ints("x", {1}).serialized();
  expect_invalid(
      [&] {
        parse_single_example(s, {{"x", VarLenFeature{DType::kInt32}}});
      },
      {"'x'", "int32"});
  expect_invalid(
      [&] {
        parse_single_example(s, {{"x", FixedLenFeature{Shape{2}, DType::kInt64,
                                                       Tensor::from_vector<int64_t>({1, 2, 3})}}});
      },
      {"default", "'x'"});
  expect_invalid(
      [&] {
        parse_single_example(
            s, {{"x", FixedLenFeature{Shape{}, DType::kInt64, Tensor::scalar(1.0f)}}});
      },
      {"default", "'x'"});
  expect_invalid(
      [&] {
        parse_example(std::vector<std::string>{s},
                      {{"x", VarLenFeature{DType::kInt64}}, {"x/row_lengths", VarLenFeature{}}});
      },
      {"clashes"});
}

// Random Examples through the protobuf encoder and back through our parser.
TEST(ParseExample, CrossCheckWithProtobufOnRandomExamples) {
  std::mt19937_64 rng(5);
  std::vector<std::string> batch;
  std::vector<Example> protos;
  for (int r = 0; r < 200; ++r) {
    Example ex;
    auto& map = *ex.mutable_features()->mutable_feature();
    const int n = static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i)
      map["i"].mutable_int64_list()->add_value(static_cast<int64_t>(rng()));
    for (int i = 0; i < n; ++i) {
      map["f"].mutable_float_list()->add_value(
          std::uniform_real_distribution<float>(-1e6, 1e6)(rng));
    }
    for (int i = 0; i < n; ++i)
      map["b"].mutable_bytes_list()->add_value(std::string(rng() % 40, 'q'));
    for (int i = 0; i < 3; ++i) map["noise" + std::to_string(i)].mutable_int64_list()->add_value(i);
    batch.push_back(ex.SerializeAsString());
    protos.push_back(ex);
  }
  const FeatureSpec spec = {{"i", VarLenFeature{DType::kInt64}},
                            {"f", VarLenFeature{DType::kFloat32}},
                            {"b", VarLenFeature{DType::kString}}};
  const Element e = parse_example(batch, spec);
  size_t at = 0;
  for (size_t r = 0; r < protos.size(); ++r) {
    const auto& map = protos[r].features().feature();
    const int n = map.count("i") ? map.at("i").int64_list().value_size() : 0;
    ASSERT_EQ(e["i/row_lengths"].values<int64_t>()[r], n);
    ASSERT_EQ(e["f/row_lengths"].values<int64_t>()[r], n);
    for (int k = 0; k < n; ++k, ++at) {
      ASSERT_EQ(e["i"].values<int64_t>()[at], map.at("i").int64_list().value(k));
      ASSERT_EQ(e["f"].values<float>()[at], map.at("f").float_list().value(k));
      ASSERT_EQ(e["b"].values<std::string>()[at], map.at("b").bytes_list().value(k));
    }
  }
  EXPECT_EQ(static_cast<int64_t>(at), e["i"].num_elements());
}

}  // namespace
}  // namespace sluice
