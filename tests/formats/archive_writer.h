// Archives for tests, written by libarchive itself: zip, tar or tar.gz, with files, directories,
// symlinks, character devices (tar only: libarchive's zip writer refuses them) and zip's
// traditional encryption; and zips of members padded with zeros, written by hand so that a member
// inflating to hundreds of MiB takes no time to make.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "tests/formats/deflate.h"

namespace sluice::testing {

struct ArchiveMember {
  std::string path;
  std::string data;
  unsigned type = AE_IFREG;  // AE_IFREG, AE_IFDIR, AE_IFLNK, AE_IFCHR.
  std::string link;          // Symlink target.
};

// `size` pseudo-random bytes from `seed`: data no compressor shrinks, so a cut in an archive of it
// lands inside a member's data.
inline std::string incompressible_bytes(size_t size, uint32_t seed) {
  std::string bytes(size, '\0');
  uint32_t x = seed;
  for (char& c : bytes) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return bytes;
}

// Whether this libarchive can write encrypted zips (write_archive's passphrase).
inline bool can_write_encrypted_zip() {
  archive* probe = archive_write_new();
  archive_write_set_format_zip(probe);
  const bool can = archive_write_set_options(probe, "zip:encryption=traditional") == ARCHIVE_OK;
  archive_write_free(probe);
  return can;
}

// Writes `members` to `path` in `format` ("zip", "tar" or "tar.gz"); a zip is encrypted with
// `passphrase` when one is given.
inline void write_archive(const std::string& path, const std::string& format,
                          const std::vector<ArchiveMember>& members,
                          const char* passphrase = nullptr) {
  archive* a = archive_write_new();
  if (format == "zip") {
    archive_write_set_format_zip(a);
  } else {
    archive_write_set_format_pax_restricted(a);
    if (format == "tar.gz") archive_write_add_filter_gzip(a);
  }
  if (passphrase) {
    ASSERT_EQ(archive_write_set_options(a, "zip:encryption=traditional"), ARCHIVE_OK)
        << archive_error_string(a);
    ASSERT_EQ(archive_write_set_passphrase(a, passphrase), ARCHIVE_OK);
  }
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK) << archive_error_string(a);
  for (const ArchiveMember& m : members) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, m.path.c_str());
    archive_entry_set_filetype(e, m.type);
    archive_entry_set_perm(e, m.type == AE_IFDIR ? 0755 : 0644);
    if (m.type == AE_IFLNK) archive_entry_set_symlink(e, m.link.c_str());
    if (m.type == AE_IFCHR) archive_entry_set_rdev(e, makedev(1, 3));
    archive_entry_set_size(e, m.type == AE_IFREG ? static_cast<la_int64_t>(m.data.size()) : 0);
    ASSERT_EQ(archive_write_header(a, e), ARCHIVE_OK) << archive_error_string(a);
    if (m.type == AE_IFREG && !m.data.empty()) {
      ASSERT_EQ(archive_write_data(a, m.data.data(), m.data.size()),
                static_cast<la_ssize_t>(m.data.size()));
    }
    archive_entry_free(e);
  }
  ASSERT_EQ(archive_write_close(a), ARCHIVE_OK);
  archive_write_free(a);
}

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
