// read_file_bytes: whole files into a fresh string or into a buffer reused from file to file
// (larger, smaller, empty, rewritten files; a pipe that has no size), and errors that name the
// file.
#include "formats/file_bytes.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <thread>

#include "core/errors.h"
#include "tests/formats/testing.h"

namespace sluice {
namespace {

// n bytes that differ from position to position (so a stale tail or a shifted copy shows).
std::string bytes_of(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i)
    s[i] = static_cast<char>((i * 131 + static_cast<size_t>(seed)) % 256);
  return s;
}

class FileBytesTest : public testing::TempDirTest {};

TEST_F(FileBytesTest, AReusedBufferGivesEachFileExactly) {
  const std::string big = bytes_of(100'000, 1), small = bytes_of(3, 2);
  testing::write_file(path("big"), big);
  testing::write_file(path("small"), small);
  testing::write_file(path("empty"), "");
  std::string buffer;
  EXPECT_EQ(read_file_bytes(path("big"), buffer), big);
  EXPECT_EQ(read_file_bytes(path("small"), buffer), small);  // No stale tail of the big file.
  EXPECT_EQ(read_file_bytes(path("empty"), buffer), "");
  EXPECT_EQ(read_file_bytes(path("big"), buffer), big);
  EXPECT_GE(buffer.size(), big.size());  // Kept for the next file.
  EXPECT_EQ(read_file_bytes(path("small")), small);
  EXPECT_EQ(read_file_bytes(path("empty")), "");
}

TEST_F(FileBytesTest, AFileThatGrowsOrShrinksBetweenReadsIsReadAsItIsNow) {
  std::string buffer;
  for (const size_t size : {10, 20'000, 5, 0, 70'000, 4096, 4097}) {
    const std::string content = bytes_of(size, static_cast<int>(size));
    testing::write_file(path("f"), content);
    EXPECT_EQ(read_file_bytes(path("f"), buffer), content) << size;
    EXPECT_EQ(read_file_bytes(path("f")), content) << size;
  }
}

TEST_F(FileBytesTest, APipeIsReadToItsEnd) {
  // A FIFO has no size: the buffer grows until read() returns 0.
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  const std::string content = bytes_of(50'000, 7);
  std::thread writer([&] { testing::write_file(path("fifo"), content); });
  std::string buffer = "left over from an earlier file";
  const std::string got(read_file_bytes(path("fifo"), buffer));
  writer.join();
  EXPECT_EQ(got, content);
}

TEST_F(FileBytesTest, ErrorsNameTheFile) {
  std::string buffer;
  try {
    read_file_bytes(path("missing.jpg"), buffer);
    FAIL() << "no error";
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find(path("missing.jpg")), std::string::npos) << e.what();
  }
  try {
    read_file_bytes(dir_.string(), buffer);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(dir_.string()), std::string::npos) << e.what();
  }
  // Reading a process's own memory at address 0 fails with EIO: a read error, not an open error.
  try {
    read_file_bytes("/proc/self/mem", buffer);
    FAIL() << "no error";
  } catch (const DataLoss& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/self/mem"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice
