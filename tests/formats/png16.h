// 16-bit PNGs for tests, written chunk by chunk (encode_png writes 8-bit ones only): what
// scanners and medical or astronomy tools produce, and what an image folder may hold.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::testing {

namespace png16_detail {

inline void put_u32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xFF);
}

inline void put_chunk(std::string& out, std::string_view type, const std::string& data) {
  put_u32(out, static_cast<uint32_t>(data.size()));
  const std::string body = std::string(type) + data;
  out += body;
  put_u32(out, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()),
                                           static_cast<uInt>(body.size()))));
}

}  // namespace png16_detail

// A 16-bit PNG of `height` x `width` pixels of `channels` samples (1 grey, 2 grey + alpha, 3 RGB,
// 4 RGBA), given row-major in `samples`. REQUIRES: samples.size() == height * width * channels.
inline std::string encode_png16(const std::vector<uint16_t>& samples, uint32_t height,
                                uint32_t width, int channels) {
  EXPECT_EQ(samples.size(), size_t{height} * width * static_cast<size_t>(channels));
  static constexpr char kColorType[] = {0, 4, 2, 6};  // By channel count.
  std::string header;
  png16_detail::put_u32(header, width);
  png16_detail::put_u32(header, height);
  header += std::string{16, kColorType[channels - 1], 0, 0, 0};  // Depth, type, no interlace.
  std::string raw;  // Each row: filter type 0, then big-endian samples.
  const size_t row = size_t{width} * static_cast<size_t>(channels);
  for (size_t y = 0; y < height; ++y) {
    raw += '\0';
    for (size_t i = 0; i < row; ++i) {
      raw += static_cast<char>(samples[y * row + i] >> 8);
      raw += static_cast<char>(samples[y * row + i] & 0xFF);
    }
  }
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string compressed(size, '\0');
  EXPECT_EQ(compress(reinterpret_cast<Bytef*>(compressed.data()), &size,
                     reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size())),
            Z_OK);
  compressed.resize(size);
  std::string png("\x89PNG\r\n\x1a\n", 8);
  png16_detail::put_chunk(png, "IHDR", header);
  png16_detail::put_chunk(png, "IDAT", compressed);
  png16_detail::put_chunk(png, "IEND", "");
  return png;
}

}  // namespace sluice::testing
