#include "core/element_codec.h"

#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <string>

#include "core/errors.h"

namespace sluice {
namespace {

Element sample() {
  return Element{{"image", Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3})},
                 {"names", Tensor::from_strings({"", "two", std::string(300, 'x')})},
                 {"empty", Tensor(DType::kInt64, Shape{0, 4})},
                 {"scalar", Tensor::scalar<uint8_t>(7)}};
}

TEST(ElementCodecTest, RoundTripsNamesDtypesShapesAndStrings) {
  std::string bytes;
  append_element(bytes, sample());
  append_element(bytes, Element{Tensor::scalar<int32_t>(-5)});
  StringByteReader in(bytes, "test bytes");
  EXPECT_TRUE(read_element(in).equals(sample()));
  const Element unnamed = read_element(in);
  EXPECT_FALSE(unnamed.is_named());
  EXPECT_EQ(unnamed[0].item<int32_t>(), -5);
  EXPECT_TRUE(in.at_end());

  std::istringstream stream(bytes);
  StreamByteReader from_stream(stream, bytes.size(), "test stream");
  EXPECT_TRUE(read_element(from_stream).equals(sample()));
}

// Every cut and every byte changed ends in DataLoss naming an offset, or in another element:
// never a read past the end or an allocation the bytes cannot back.
TEST(ElementCodecTest, BadBytesAreDataLossNamingTheOffset) {
  std::string bytes;
  append_element(bytes, sample());
  for (size_t n = 0; n < bytes.size(); ++n) {
    StringByteReader in(std::string_view(bytes).substr(0, n), "cut bytes", 100);
    try {
      read_element(in);
      ADD_FAILURE() << "a cut at " << n << " decoded";
    } catch (const DataLoss& e) {
      // The offset counts from the reader's base, 100, and lies within the bytes given.
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("cut bytes: ", 0), 0u) << message;
      const size_t at = message.find("at byte offset ");
      ASSERT_NE(at, std::string::npos) << message;
      const uint64_t offset = std::stoull(message.substr(at + 15));
      EXPECT_GE(offset, 100u) << message;
      EXPECT_LE(offset, 100u + n) << message;
    }
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ flip);
      StringByteReader in(bad, "changed bytes");
      try {
        read_element(in);
      } catch (const DataLoss&) {
      }
    }
  }
  // A huge dimension is refused before anything is allocated.
  std::string huge;
  append_element(huge, Element{Tensor(DType::kFloat32, Shape{3})});
  const int64_t dim = int64_t{1} << 60;
  std::memcpy(huge.data() + 4 + 4, &dim, sizeof(dim));
  StringByteReader in(huge, "huge");
  EXPECT_THROW(read_element(in), DataLoss);
  // Found by the state fuzzer: huge dimensions before a zero one hold no elements, but their
  // product overflows Shape's count on the way.
  std::string empty;
  append_element(empty, Element{Tensor(DType::kFloat32, Shape{0, 0, 0})});
  for (int d = 0; d < 2; ++d) std::memcpy(empty.data() + 8 + 8 * d, &dim, sizeof(dim));
  StringByteReader overflowing(empty, "overflowing");
  EXPECT_THROW(read_element(overflowing), DataLoss);
}

}  // namespace
}  // namespace sluice
