// Zips of members padded with zeros, written by hand so that a member inflating to hundreds of
// MiB takes no time to make and about 1 KiB of disk per MiB: the decompression bombs of the tests
// and fuzz seeds.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "tests/formats/deflate.h"

namespace sluice::testing {

struct PaddedMember {
  std::string path;
  std::string head;      // The member's first bytes (an image, say).
  int64_t zero_mib = 0;  // Then this many MiB of zeros.
};

// Writes a zip whose members are deflated `head` + zeros, about 1 KiB on disk per MiB of zeros:
// each MiB of zeros is the same independent deflate blocks (compressed once, after a full flush,
// so they refer to nothing before them), and the CRCs are combined rather than computed.
inline void write_padded_zip(const std::string& path, const std::vector<PaddedMember>& members) {
  const std::string zeros(1 << 20, '\0');
  const std::string zeros_block = deflate_bytes(zeros, -15, false);
  const uLong zeros_crc = crc32(0, reinterpret_cast<const Bytef*>(zeros.data()), 1 << 20);
  std::string zip;
  std::string directory;
  const auto put16 = [](std::string& out, uint32_t v) {
    out += static_cast<char>(v & 0xFF);
    out += static_cast<char>((v >> 8) & 0xFF);
  };
  const auto put32 = [&put16](std::string& out, uint32_t v) {
    put16(out, v & 0xFFFF);
    put16(out, v >> 16);
  };
  for (const PaddedMember& m : members) {
    std::string data = deflate_bytes(m.head, -15, false);
    uLong crc =
        crc32(0, reinterpret_cast<const Bytef*>(m.head.data()), static_cast<uInt>(m.head.size()));
    for (int64_t i = 0; i < m.zero_mib; ++i) {
      data += zeros_block;
      crc = crc32_combine(crc, zeros_crc, 1 << 20);
    }
    data += std::string("\x03\x00", 2);  // An empty final block (fixed Huffman, end of block).
    const auto size = static_cast<uint32_t>(m.head.size() + (m.zero_mib << 20));
    // Local header, then the same fields in the central directory's entry.
    std::string fields;
    put16(fields, 20);    // Version needed: 2.0 (deflate).
    put16(fields, 0);     // Flags.
    put16(fields, 8);     // Deflate.
    put16(fields, 0);     // Time.
    put16(fields, 0x21);  // Date: 1980-01-01.
    put32(fields, static_cast<uint32_t>(crc));
    put32(fields, static_cast<uint32_t>(data.size()));
    put32(fields, size);
    put16(fields, static_cast<uint32_t>(m.path.size()));
    put16(fields, 0);  // Extra field length.
    const auto offset = static_cast<uint32_t>(zip.size());
    put32(zip, 0x04034b50);
    zip += fields + m.path + data;
    put32(directory, 0x02014b50);
    put16(directory, 20);  // Made by: MS-DOS, version 2.0.
    directory += fields;
    put16(directory, 0);  // Comment length.
    put16(directory, 0);  // Disk.
    put16(directory, 0);  // Internal attributes.
    put32(directory, 0);  // External attributes.
    put32(directory, offset);
    directory += m.path;
  }
  const auto directory_offset = static_cast<uint32_t>(zip.size());
  zip += directory;
  put32(zip, 0x06054b50);
  put16(zip, 0);
  put16(zip, 0);
  put16(zip, static_cast<uint32_t>(members.size()));
  put16(zip, static_cast<uint32_t>(members.size()));
  put32(zip, static_cast<uint32_t>(directory.size()));
  put32(zip, directory_offset);
  put16(zip, 0);  // Comment length.
  std::ofstream(path, std::ios::binary | std::ios::trunc) << zip;
}

}  // namespace sluice::testing
