// The file seam. read_whole_file: whole files into a fresh string or into a buffer reused from file
// to file (larger, smaller, empty, rewritten files; a pipe that has no size). WritableFile: a
// replacement appears whole or not at all, and a write that fails (a file size limit set with
// RLIMIT_FSIZE, a folder that cannot be written) leaves the old file intact, no temporary file,
// and an error naming the path.
#include "sluice/core/file_system.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "sluice/core/errors.h"
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

class FileSystemTest : public testing::TempDirTest {
 protected:
  // The files in the scratch folder, by name.
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }
};

// Lowers the process's file size limit for its lifetime, with SIGXFSZ ignored so that a write
// past it fails with EFBIG instead of killing the process: a full disk, without root.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    previous_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit lowered = saved_;
    lowered.rlim_cur = bytes;
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &lowered), 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_handler_);
  }

 private:
  rlimit saved_{};
  void (*previous_handler_)(int) = nullptr;
};

TEST_F(FileSystemTest, AReusedBufferGivesEachFileExactly) {
  const std::string big = bytes_of(100'000, 1), small = bytes_of(3, 2);
  testing::write_file(path("big"), big);
  testing::write_file(path("small"), small);
  testing::write_file(path("empty"), "");
  std::string buffer;
  EXPECT_EQ(read_whole_file(path("big"), buffer), big);
  EXPECT_EQ(read_whole_file(path("small"), buffer), small);  // No stale tail of the big file.
  EXPECT_EQ(read_whole_file(path("empty"), buffer), "");
  EXPECT_EQ(read_whole_file(path("big"), buffer), big);
  EXPECT_GE(buffer.size(), big.size());  // Kept for the next file.
  EXPECT_EQ(read_whole_file(path("small")), small);
  EXPECT_EQ(read_whole_file(path("empty")), "");
}

TEST_F(FileSystemTest, AFileThatGrowsOrShrinksBetweenReadsIsReadAsItIsNow) {
  std::string buffer;
  for (const size_t size : {10, 20'000, 5, 0, 70'000, 4096, 4097}) {
    const std::string content = bytes_of(size, static_cast<int>(size));
    testing::write_file(path("f"), content);
    EXPECT_EQ(read_whole_file(path("f"), buffer), content) << size;
    EXPECT_EQ(read_whole_file(path("f")), content) << size;
  }
}

TEST_F(FileSystemTest, APipeIsReadToItsEnd) {
  // A FIFO has no size: the buffer grows until read() returns 0.
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  const std::string content = bytes_of(50'000, 7);
  std::thread writer([&] { testing::write_file(path("fifo"), content); });
  std::string buffer = "left over from an earlier file";
  const std::string got(read_whole_file(path("fifo"), buffer));
  writer.join();
  EXPECT_EQ(got, content);
}

TEST_F(FileSystemTest, ErrorsNameTheFile) {
  std::string buffer;
  try {
    read_whole_file(path("missing.jpg"), buffer);
    FAIL() << "no error";
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find(path("missing.jpg")), std::string::npos) << e.what();
  }
  try {
    read_whole_file(dir_.string(), buffer);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(dir_.string()), std::string::npos) << e.what();
  }
  // Reading a process's own memory at address 0 fails with EIO: a read error, not an open error.
  try {
    read_whole_file("/proc/self/mem", buffer);
    FAIL() << "no error";
  } catch (const DataLoss& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/self/mem"), std::string::npos) << e.what();
  }
}

TEST_F(FileSystemTest, AMappedFileShowsTheBytesAndOutlivesAReplacement) {
  const std::string bytes = bytes_of(10000, 3);
  write_file_atomically(path("a.bin"), bytes);
  MappedFile mapped(path("a.bin"));
  ASSERT_EQ(mapped.size(), bytes.size());
  EXPECT_EQ(mapped.bytes(), bytes);
  EXPECT_TRUE(mapped.contains(mapped.data() + 9990, 10));
  EXPECT_FALSE(mapped.contains(mapped.data() + 9991, 10));
  EXPECT_FALSE(mapped.contains(bytes.data()));
  // A replaced file is a new inode: the mapping keeps the old bytes.
  write_file_atomically(path("a.bin"), bytes_of(10000, 4));
  EXPECT_EQ(mapped.bytes(), bytes);
  // Writes through a mapping stay in it.
  MappedFile current(path("a.bin"));
  const_cast<char*>(current.data())[0] ^= 1;
  EXPECT_NE(current.bytes(), bytes_of(10000, 4));
  EXPECT_EQ(read_whole_file(path("a.bin")), bytes_of(10000, 4));
  write_file_atomically(path("empty"), "");
  MappedFile empty(path("empty"));
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_THROW(MappedFile(path("missing")), NotFound);
  EXPECT_THROW(MappedFile(dir_.string()), InvalidArgument);
}

TEST_F(FileSystemTest, AReplacementAppearsOnlyWhenClosed) {
  testing::write_file(path("model.ckpt"), "old");
  {
    WritableFile file = WritableFile::replace(path("model.ckpt"));
    file.append("new ");
    file.append(bytes_of(10'000, 3));
    EXPECT_EQ(read_whole_file(path("model.ckpt")), "old");  // Readers still see the old file.
    file.close();
    file.close();  // Idempotent.
  }
  EXPECT_EQ(read_whole_file(path("model.ckpt")), "new " + bytes_of(10'000, 3));
  EXPECT_EQ(listing(), std::vector<std::string>{"model.ckpt"});  // No temporary left.
}

TEST_F(FileSystemTest, AReplacementsTemporaryNameSaysItsTargetAndWriter) {
  WritableFile file = WritableFile::replace(path("model.ckpt-7"));
  const auto parsed =
      parse_replacement_name(std::filesystem::path(file.written_path()).filename().string());
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->target, "model.ckpt-7");
  EXPECT_EQ(parsed->writer, static_cast<long long>(::getpid()));
  for (const char* other : {"model.ckpt-7", "model.ckpt-7.tmp", "x.tmp12a", "x.tmp0"}) {
    EXPECT_FALSE(parse_replacement_name(other).has_value()) << other;
  }
}

TEST_F(FileSystemTest, AReplacementDestroyedUnclosedLeavesTheOldFile) {
  testing::write_file(path("cache"), "old");
  {
    WritableFile file = WritableFile::replace(path("cache"));
    file.append("half of the new");
  }
  EXPECT_EQ(read_whole_file(path("cache")), "old");
  EXPECT_EQ(listing(), std::vector<std::string>{"cache"});
}

TEST_F(FileSystemTest, AWriteFailingAtTheFileSizeLimitKeepsThePreviousFile) {
  const std::string previous = bytes_of(1000, 4);
  write_file_atomically(path("weights"), previous);
  try {
    FileSizeLimit limit(64 << 10);
    write_file_atomically(path("weights"), bytes_of(1 << 20, 5));
    FAIL() << "a write past the file size limit succeeded";
  } catch (const ResourceExhausted& e) {
    EXPECT_NE(std::string(e.what()).find(path("weights")), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_whole_file(path("weights")), previous);
  EXPECT_EQ(listing(), std::vector<std::string>{"weights"});
  // Within the limit, the same write goes through.
  FileSizeLimit limit(64 << 10);
  write_file_atomically(path("weights"), bytes_of(1000, 6));
  EXPECT_EQ(read_whole_file(path("weights")), bytes_of(1000, 6));
}

TEST_F(FileSystemTest, AFileWrittenInPlaceGrowsAsItIsWritten) {
  WritableFile file = WritableFile::create(path("events"));
  file.append("first record ");
  EXPECT_EQ(read_whole_file(path("events")), "first record ");  // Followed as it grows.
  file.append("second");
  file.sync();
  file.close();
  EXPECT_EQ(read_whole_file(path("events")), "first record second");
}

TEST_F(FileSystemTest, FilesThatCannotBeCreatedAreErrorsNamingThem) {
  try {
    write_file_atomically(path("no/such/folder/f"), "x");
    FAIL() << "no error";
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find(path("no/such/folder/f")), std::string::npos) << e.what();
  }
  if (::geteuid() != 0) {  // root writes anywhere.
    std::filesystem::create_directory(path("locked"));
    std::filesystem::permissions(
        path("locked"), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    EXPECT_THROW(write_file_atomically(path("locked/f"), "x"), PermissionDenied);
  }
}

TEST_F(FileSystemTest, ANewFileIsRefusedWhenOneExists) {
  WritableFile::create_new(path("lock")).close();
  EXPECT_THROW(WritableFile::create_new(path("lock")), AlreadyExists);
  std::filesystem::remove(path("lock"));
  WritableFile::create_new(path("lock")).close();
}

TEST_F(FileSystemTest, RenamingASetPutsEveryFileInPlace) {
  testing::write_file(path("a.tmp"), "A");
  testing::write_file(path("b.tmp"), "B");
  testing::write_file(path("b"), "old B");
  rename_into_place({path("a.tmp"), path("b.tmp")}, {path("a"), path("b")});
  EXPECT_EQ(read_whole_file(path("a")), "A");
  EXPECT_EQ(read_whole_file(path("b")), "B");
  EXPECT_EQ(listing(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(FileSystemTest, AStagedFolderReplacesAnEmptyOne) {
  std::filesystem::create_directories(path("staging/sub"));
  std::filesystem::create_directory(path("target"));
  WritableFile file = WritableFile::create(path("staging/sub/f"));
  file.append("member");
  file.close();
  replace_folder(path("staging"), path("target"));
  EXPECT_EQ(read_whole_file(path("target/sub/f")), "member");
  EXPECT_FALSE(std::filesystem::exists(path("staging")));
}

TEST_F(FileSystemTest, SequentialReadsAndSkipsStopAtTheEnd) {
  testing::write_file(path("f"), "0123456789");
  SequentialFile file(path("f"));
  char buffer[4];
  ASSERT_EQ(file.read(buffer, 4), 4u);
  EXPECT_EQ(std::string(buffer, 4), "0123");
  EXPECT_EQ(file.skip(3), 3u);
  ASSERT_EQ(file.read(buffer, 4), 3u);
  EXPECT_EQ(std::string(buffer, 3), "789");
  EXPECT_EQ(file.skip(5), 0u);
  EXPECT_THROW(SequentialFile(path("missing")), NotFound);
  EXPECT_THROW(SequentialFile(dir_.string()), InvalidArgument);
}

TEST_F(FileSystemTest, ReadsAtAnOffsetLeaveThePositionAlone) {
  testing::write_file(path("f"), "0123456789");
  SequentialFile file(path("f"));
  char buffer[4];
  ASSERT_EQ(file.read(buffer, 2), 2u);
  ASSERT_EQ(file.read_at(5, buffer, 4), 4u);
  EXPECT_EQ(std::string(buffer, 4), "5678");
  ASSERT_EQ(file.read_at(8, buffer, 4), 2u);  // Short at the end.
  EXPECT_EQ(std::string(buffer, 2), "89");
  EXPECT_EQ(file.read_at(10, buffer, 4), 0u);
  EXPECT_EQ(file.read_at(1000, buffer, 4), 0u);
  ASSERT_EQ(file.read(buffer, 3), 3u);  // read() goes on where it was.
  EXPECT_EQ(std::string(buffer, 3), "234");
}

}  // namespace
}  // namespace sluice
