// Archives for tests, written by libarchive itself: zip, tar or tar.gz, with files, directories,
// symlinks, character devices (tar only: libarchive's zip writer refuses them) and zip's
// traditional encryption.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace sluice::testing
