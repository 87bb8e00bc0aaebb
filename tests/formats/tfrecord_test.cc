// TFRecordReader and TFRecordWriter: framing, CRCs, compression, read-ahead, offsets and every
// corruption named by file and offset. About 530 lines, one concern.
#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/formats/compression.h"
#include "sluice/formats/crc32c.h"
#include "sluice/formats/tfrecord_reader.h"
#include "sluice/formats/tfrecord_writer.h"
#include "tests/formats/deflate.h"
#include "tests/formats/testing.h"

namespace sluice {
namespace {

using testing::deflate_bytes;
using testing::hex;
using testing::read_file;
using testing::unhex;
using testing::write_file;

std::vector<std::string> read_all(const std::string& path, Compression compression,
                                  size_t buffer_size = 256 << 10, bool read_ahead = false) {
  TFRecordReader reader(
      path, {.compression = compression, .buffer_size = buffer_size, .read_ahead = read_ahead});
  std::vector<std::string> out;
  std::string record;
  while (reader.read(record)) out.push_back(record);
  EXPECT_FALSE(reader.read(record)) << "the end must stay the end";
  return out;
}

void write_all(const std::string& path, const std::vector<std::string>& records,
               Compression compression = Compression::kNone) {
  TFRecordWriter writer(path, compression);
  for (const auto& r : records) writer.write(r);
  writer.close();
}

// Reads until the reader throws; returns the error message and the records read before it.
std::string read_until_error(const std::string& path, Compression compression,
                             std::vector<std::string>* before = nullptr,
                             size_t buffer_size = 256 << 10, bool read_ahead = false) {
  TFRecordReader reader(
      path, {.compression = compression, .buffer_size = buffer_size, .read_ahead = read_ahead});
  std::string record;
  try {
    while (reader.read(record)) {
      if (before) before->push_back(record);
    }
  } catch (const DataLoss& e) {
    // The reader stays failed with the same error.
    try {
      reader.read(record);
      ADD_FAILURE() << "a failed reader must keep failing";
    } catch (const DataLoss& again) {
      EXPECT_STREQ(again.what(), e.what());
    }
    return e.what();
  }
  return "no error";
}

class TFRecordTest : public testing::TempDirTest {};

TEST_F(TFRecordTest, GoldenBytesMatchTensorFlow) {
  write_all(path("golden"), {"abc", "defg"});
  EXPECT_EQ(hex(read_file(path("golden"))),
            "0300000000000000b099490e6162636e57f121"
            "04000000000000004245520464656667"
            "27071ba1");
  write_all(path("empty_record"), {""});
  EXPECT_EQ(hex(read_file(path("empty_record"))), "000000000000000029039807d8ea82a2");
  write_all(path("foo"), {"foo"});
  EXPECT_EQ(hex(read_file(path("foo"))), "0300000000000000b099490e666f6f618abefe");

  // And the reader takes TensorFlow's bytes as they are.
  write_file(path("tf"), unhex("0300000000000000b099490e6162636e57f121"
                               "0400000000000000424552046465666727071ba1"));
  EXPECT_EQ(read_all(path("tf"), Compression::kNone), (std::vector<std::string>{"abc", "defg"}));
}

TEST_F(TFRecordTest, RoundTripEveryCompression) {
  std::mt19937_64 rng(11);
  std::vector<std::string> records = {"", "a", "", std::string(1 << 20, 'x')};
  for (auto& c : records.back()) c = static_cast<char>(rng());
  for (int i = 0; i < 500; ++i) records.push_back(std::string(rng() % 300, static_cast<char>(i)));
  records.push_back("");
  for (Compression c : {Compression::kNone, Compression::kZlib, Compression::kGzip}) {
    const std::string file = path(std::string("rt_") + std::string(compression_name(c)));
    write_all(file, records, c);
    EXPECT_EQ(read_all(file, c), records) << compression_name(c);
    // Tiny buffers take the large-record path for almost every record.
    EXPECT_EQ(read_all(file, c, 7), records) << compression_name(c) << " small buffer";
    EXPECT_EQ(read_all(file, c, 1000), records) << compression_name(c) << " 1000-byte buffer";
  }
}

TEST_F(TFRecordTest, OffsetsAndIndicesAndViews) {
  write_all(path("f"), {"abc", "", "defg"});
  TFRecordReader reader(path("f"));
  EXPECT_EQ(reader.offset(), 0u);
  std::string_view view;
  ASSERT_TRUE(reader.read_view(view));
  EXPECT_EQ(view, "abc");
  EXPECT_EQ(reader.offset(), 19u);
  EXPECT_EQ(reader.record_index(), 1);
  ASSERT_TRUE(reader.read_view(view));
  EXPECT_EQ(view, "");
  EXPECT_EQ(reader.offset(), 35u);
  ASSERT_TRUE(reader.read_view(view));
  EXPECT_EQ(view, "defg");
  EXPECT_FALSE(reader.read_view(view));
  EXPECT_EQ(reader.record_index(), 3);
  EXPECT_EQ(reader.offset(), 55u);
}

TEST_F(TFRecordTest, SeekTakesUpASavedPosition) {
  std::vector<std::string> records;
  for (int i = 0; i < 40; ++i)
    records.push_back(std::string(static_cast<size_t>(i * 37 % 101), 'r'));
  for (Compression c : {Compression::kNone, Compression::kGzip}) {
    const std::string file = path(std::string("seek_") + std::string(compression_name(c)));
    write_all(file, records, c);
    // Where each record starts, as a reader reports it.
    std::vector<uint64_t> offsets;
    {
      TFRecordReader reader(file, c);
      std::string record;
      do offsets.push_back(reader.offset());
      while (reader.read(record));
    }
    for (size_t k : {size_t{0}, size_t{1}, size_t{17}, records.size()}) {
      TFRecordReader reader(file, {.compression = c, .buffer_size = 64});
      reader.seek(offsets[k], static_cast<int64_t>(k));
      std::vector<std::string> rest;
      for (std::string record; reader.read(record);) rest.push_back(record);
      EXPECT_EQ(rest, std::vector<std::string>(records.begin() + static_cast<std::ptrdiff_t>(k),
                                               records.end()))
          << compression_name(c) << " k=" << k;
      EXPECT_EQ(reader.record_index(), static_cast<int64_t>(records.size()));
    }
    TFRecordReader past(file, c);
    const std::string message =
        testing::error_of<DataLoss>([&] { past.seek(offsets.back() + 1, 40); });
    EXPECT_NE(message.find(file), std::string::npos) << message;
  }
}

TEST_F(TFRecordTest, CompressedHeadersAreTensorFlows) {
  write_all(path("g"), {"abc"}, Compression::kGzip);
  // gzip magic, deflate, no flags, mtime 0, no extra flags, OS 3 (Unix): TensorFlow's header.
  EXPECT_EQ(hex(read_file(path("g")).substr(0, 10)), "1f8b0800000000000003");
  write_all(path("z"), {"abc"}, Compression::kZlib);
  const std::string z = read_file(path("z"));
  EXPECT_EQ(static_cast<unsigned char>(z[0]) & 0x0f, 8);  // CM = deflate
  EXPECT_EQ(((static_cast<unsigned char>(z[0]) << 8) | static_cast<unsigned char>(z[1])) % 31, 0);
}

// Files compressed by other zlib users: gzip members with a file name, several members
// concatenated (as `cat a.gz b.gz`), and a zlib stream from compress2 (Python's zlib.compress).
TEST_F(TFRecordTest, ReadsForeignCompressedStreams) {
  write_all(path("a"), {"first", "second"});
  write_all(path("b"), {"third"});
  const std::string plain_a = read_file(path("a"));
  const std::string plain_b = read_file(path("b"));

  for (const auto& [name, bytes] : {std::pair{"a", plain_a}, std::pair{"b", plain_b}}) {
    gzFile gz = gzopen(path(std::string(name) + ".gz").c_str(), "wb9");
    ASSERT_NE(gz, nullptr);
    gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(gz);
  }
  write_file(path("ab.gz"), read_file(path("a.gz")) + read_file(path("b.gz")));
  EXPECT_EQ(read_all(path("ab.gz"), Compression::kGzip),
            (std::vector<std::string>{"first", "second", "third"}));
  EXPECT_EQ(read_all(path("ab.gz"), Compression::kGzip, 5),
            (std::vector<std::string>{"first", "second", "third"}));

  // A gzip header with FNAME, as the gzip tool writes.
  std::string named = read_file(path("a.gz"));
  named[3] = 0x08;
  named.insert(10, std::string("data.tfrecord\0", 14));
  write_file(path("named.gz"), named);
  EXPECT_EQ(read_all(path("named.gz"), Compression::kGzip),
            (std::vector<std::string>{"first", "second"}));

  uLongf size = compressBound(static_cast<uLong>(plain_a.size()));
  std::string z(size, '\0');
  ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(z.data()), &size,
                      reinterpret_cast<const Bytef*>(plain_a.data()),
                      static_cast<uLong>(plain_a.size()), 6),
            Z_OK);
  z.resize(size);
  write_file(path("a.zlib"), z);
  EXPECT_EQ(read_all(path("a.zlib"), Compression::kZlib),
            (std::vector<std::string>{"first", "second"}));
}

// A length field that passes its CRC but exceeds the maximum record size is refused from the
// header, before a byte of the record is read or allocated, naming the file, the record and its
// offset in the uncompressed stream.
TEST_F(TFRecordTest, RecordOverTheMaximumSizeIsRefusedFromItsHeader) {
  write_all(path("one"), {"abc"});
  const std::string huge =
      read_file(path("one")) + testing::tfrecord_header(uint64_t{1} << 40) + "zz";
  write_file(path("huge"), huge);
  write_file(path("huge.gz"), deflate_bytes(huge, 31));
  for (const auto& [file, c] : {std::pair{path("huge"), Compression::kNone},
                                std::pair{path("huge.gz"), Compression::kGzip}}) {
    TFRecordReader reader(file, c);
    std::string record;
    ASSERT_TRUE(reader.read(record));
    EXPECT_EQ(record, "abc");
    const std::string message = testing::error_of<ResourceExhausted>([&] { reader.read(record); });
    EXPECT_EQ(message,
              "record at 19 declares 1099511627776 bytes, more than the maximum record "
              "size of 268435456 bytes [file: " +
                  file + ", record: 1]");
    // The reader stays failed.
    EXPECT_EQ(testing::error_of<ResourceExhausted>([&] { reader.read(record); }), message);
  }
  // The limit is an option; a record of exactly the limit is read.
  write_all(path("sizes"), {std::string(64, 'a'), std::string(65, 'b')});
  TFRecordReader reader(path("sizes"), {.max_record_size = 64});
  std::string record;
  ASSERT_TRUE(reader.read(record));
  EXPECT_EQ(record.size(), 64u);
  EXPECT_NE(testing::error_of<ResourceExhausted>([&] {
              reader.read(record);
            }).find("record at 80 declares 65 bytes"),
            std::string::npos);
  EXPECT_THROW(TFRecordReader(path("sizes"), {.max_record_size = 0}), InvalidArgument);
}

// A record declaring more bytes than the stream holds is truncated; read through a small buffer,
// so the record is read straight from the stream in pieces, each checked as it arrives.
TEST_F(TFRecordTest, LargeRecordsReadInPiecesAreCheckedWhole) {
  std::string big(5 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 >> 7);
  write_all(path("big.gz"), {"x", big, "y"}, Compression::kGzip);
  EXPECT_EQ(read_all(path("big.gz"), Compression::kGzip, 4096),
            (std::vector<std::string>{"x", big, "y"}));
  write_all(path("big"), {big});
  std::string bad = read_file(path("big"));
  bad[12 + (9 << 19)] ^= 1;  // In the second piece.
  write_file(path("bad"), bad);
  EXPECT_EQ(read_until_error(path("bad"), Compression::kNone, nullptr, 4096),
            "corrupted record at 12 [file: " + path("bad") + ", record: 0]");
  write_file(path("short"), std::string_view(read_file(path("big"))).substr(0, 9 << 19));
  EXPECT_EQ(read_until_error(path("short"), Compression::kNone, nullptr, 4096),
            "truncated record at 0 [file: " + path("short") + ", record: 0]");
}

// Bad deflate data after good records: the records before it are read, then the error names the
// offset in the compressed file and in the uncompressed stream.
TEST_F(TFRecordTest, InflateErrorsNameTheCompressedAndUncompressedOffsets) {
  write_all(path("plain"), {"first", "second"});
  const std::string plain = read_file(path("plain"));
  for (const auto& [bits, c] :
       {std::pair{31, Compression::kGzip}, std::pair{15, Compression::kZlib}}) {
    // After a full flush the next byte starts a block: 0xFF is a final block of type 3, which
    // does not exist.
    const std::string good = deflate_bytes(plain, bits, /*finish=*/false);
    write_file(path("bad"), good + "\xFF\xFF\xFF\xFF");
    std::vector<std::string> before;
    const std::string message = read_until_error(path("bad"), c, &before);
    SCOPED_TRACE(message);
    EXPECT_EQ(before, (std::vector<std::string>{"first", "second"}));
    EXPECT_EQ(message.rfind("inflate() failed with error -3: invalid block type", 0), 0u);
    // inflate() has consumed the byte holding the bad block header.
    EXPECT_NE(message.find(" at compressed offset " + std::to_string(good.size() + 1) +
                           ", uncompressed offset " + std::to_string(plain.size()) +
                           " [file: " + path("bad") + ", record: 2]"),
              std::string::npos);
    // The same bytes cut into the middle of a record: a truncated record, and why.
    write_file(path("bad2"), deflate_bytes(plain.substr(0, 25), bits, false) + "\xFF");
    before.clear();
    const std::string cut = read_until_error(path("bad2"), c, &before);
    EXPECT_EQ(before, (std::vector<std::string>{"first"}));
    EXPECT_EQ(cut.rfind("truncated record at 21: inflate() failed with error -3", 0), 0u) << cut;
    EXPECT_NE(cut.find("uncompressed offset 25 [file: " + path("bad2") + ", record: 1]"),
              std::string::npos)
        << cut;
  }
  // A stream that simply ends: the offsets of its end.
  const std::string gz = deflate_bytes(plain, 31);
  write_file(path("cut.gz"), gz.substr(0, gz.size() - 8));  // Without the gzip trailer.
  const std::string message = read_until_error(path("cut.gz"), Compression::kGzip);
  EXPECT_NE(message.find("truncated compressed stream (the file ends inside a ZLIB/GZIP stream) "
                         "at compressed offset " +
                         std::to_string(gz.size() - 8) + ", uncompressed offset " +
                         std::to_string(plain.size())),
            std::string::npos)
      << message;
}

TEST_F(TFRecordTest, DetectsGzipByMagicBytes) {
  write_all(path("plain"), {"abc"});
  write_all(path("gz"), {"abc"}, Compression::kGzip);
  write_file(path("empty"), "");
  EXPECT_EQ(detect_compression(path("plain")), Compression::kNone);
  EXPECT_EQ(detect_compression(path("gz")), Compression::kGzip);
  EXPECT_EQ(detect_compression(path("empty")), Compression::kNone);
  EXPECT_THROW(detect_compression(path("missing")), NotFound);

  TFRecordReader reader(path("gz"), Compression::kAuto);
  EXPECT_EQ(reader.compression(), Compression::kGzip);
  EXPECT_EQ(read_all(path("gz"), Compression::kAuto), std::vector<std::string>{"abc"});
  EXPECT_EQ(read_all(path("plain"), Compression::kAuto), std::vector<std::string>{"abc"});
}

TEST_F(TFRecordTest, CompressionNames) {
  EXPECT_EQ(parse_compression(""), Compression::kNone);
  EXPECT_EQ(parse_compression("GZIP"), Compression::kGzip);
  EXPECT_EQ(parse_compression("gzip"), Compression::kGzip);
  EXPECT_EQ(parse_compression("ZLIB"), Compression::kZlib);
  EXPECT_EQ(parse_compression("none"), Compression::kNone);
  EXPECT_EQ(parse_compression("auto"), Compression::kAuto);
  EXPECT_THROW(parse_compression("SNAPPY"), InvalidArgument);
}

TEST_F(TFRecordTest, EmptyFilesHaveNoRecords) {
  write_file(path("empty"), "");
  for (Compression c : {Compression::kNone, Compression::kZlib, Compression::kGzip}) {
    EXPECT_TRUE(read_all(path("empty"), c).empty());
  }
  EXPECT_TRUE(read_all(path("empty"), Compression::kNone, 4096, /*read_ahead=*/true).empty());
  write_all(path("empty_gz"), {}, Compression::kGzip);
  EXPECT_TRUE(read_all(path("empty_gz"), Compression::kGzip).empty());
}

TEST_F(TFRecordTest, MissingFileIsNotFound) {
  EXPECT_THROW(TFRecordReader(path("nope")), NotFound);
  EXPECT_THROW(TFRecordWriter(path("no/such/dir/out")), NotFound);
}

// Records "abc" (0..18), "defgh" (19..39), "ij" (40..57). Flipping one byte of each part of the
// middle record gives the right error at the right offset, after the first record was returned.
TEST_F(TFRecordTest, CorruptionGivesTheRightErrorAtTheRightOffset) {
  write_all(path("good"), {"abc", "defgh", "ij"});
  const std::string good = read_file(path("good"));
  ASSERT_EQ(good.size(), 58u);
  struct Case {
    size_t byte;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {19 + 0, "corrupted record at 19 [file: "},  {19 + 6, "corrupted record at 19 [file: "},
      {19 + 8, "corrupted record at 19 [file: "},  {19 + 11, "corrupted record at 19 [file: "},
      {19 + 12, "corrupted record at 31 [file: "}, {19 + 16, "corrupted record at 31 [file: "},
      {19 + 17, "corrupted record at 31 [file: "}, {19 + 20, "corrupted record at 31 [file: "},
  };
  for (const Case& c : cases) {
    for (size_t buffer : {size_t{256 << 10}, size_t{16}}) {
      for (bool read_ahead : {false, true}) {
        std::string bad = good;
        bad[c.byte] ^= 0x20;
        write_file(path("bad"), bad);
        std::vector<std::string> before;
        const std::string message =
            read_until_error(path("bad"), Compression::kNone, &before, buffer, read_ahead);
        EXPECT_EQ(message.rfind(c.expected, 0), 0u) << "byte " << c.byte << ": " << message;
        EXPECT_NE(message.find(path("bad") + ", record: 1]"), std::string::npos) << message;
        EXPECT_EQ(before, std::vector<std::string>{"abc"}) << "byte " << c.byte;
      }
    }
  }
  // The first record's length: TensorFlow's hint that this may not be a TFRecord file at all.
  std::string bad = good;
  bad[2] ^= 1;
  write_file(path("bad0"), bad);
  EXPECT_EQ(read_until_error(path("bad0"), Compression::kNone),
            "corrupted record at 0 (Is this even a TFRecord file?) [file: " + path("bad0") +
                ", record: 0]");
  // A bad data CRC of the first record: the classic "corrupted record at 12".
  bad = good;
  bad[12] ^= 1;
  write_file(path("bad12"), bad);
  EXPECT_EQ(read_until_error(path("bad12"), Compression::kNone).rfind("corrupted record at 12 ", 0),
            0u);
}

TEST_F(TFRecordTest, CompressedCorruptionIsDetectedToo) {
  // Same framing checks behind decompression: write records whose bytes we corrupt before
  // compressing, so zlib is happy and the TFRecord CRC is not.
  write_all(path("good"), {"abc", "defgh", "ij"});
  std::string bad = read_file(path("good"));
  bad[19 + 13] ^= 1;
  write_file(path("bad"), bad);
  gzFile gz = gzopen(path("bad.gz").c_str(), "wb");
  gzwrite(gz, bad.data(), static_cast<unsigned>(bad.size()));
  gzclose(gz);
  EXPECT_EQ(
      read_until_error(path("bad.gz"), Compression::kGzip).rfind("corrupted record at 31 ", 0), 0u);
}

TEST_F(TFRecordTest, TruncationAtEveryOffsetOfTheLastRecord) {
  write_all(path("good"), {"abc", "defgh", "last record"});
  const std::string good = read_file(path("good"));
  const size_t last = 19 + 21;
  ASSERT_EQ(good.size(), last + 16 + 11);
  for (size_t cut = last; cut < good.size(); ++cut) {
    write_file(path("cut"), std::string_view(good).substr(0, cut));
    for (size_t buffer : {size_t{256 << 10}, size_t{8}}) {
      for (bool read_ahead : {false, true}) {
        std::vector<std::string> before;
        const std::string message =
            read_until_error(path("cut"), Compression::kNone, &before, buffer, read_ahead);
        EXPECT_EQ(before, (std::vector<std::string>{"abc", "defgh"})) << "cut " << cut;
        if (cut == last) {
          EXPECT_EQ(message, "no error") << "a cut at a record boundary is a clean end";
        } else {
          EXPECT_EQ(message, "truncated record at 40 [file: " + path("cut") + ", record: 2]")
              << "cut " << cut;
        }
      }
    }
  }
}

// Records of every size, small ones checked in the buffer and large ones read past it, across
// the boundaries of blocks read by either thread; and a reader dropped while the helper waits for
// room.
TEST_F(TFRecordTest, ReadAheadReadsExactlyWhatThePlainReaderReads) {
  std::mt19937 rng(5);
  std::vector<std::string> records;
  for (int i = 0; i < 300; ++i) {
    const size_t n = i % 50 == 0 ? 70000 + rng() % 5000 : rng() % 3000;
    std::string r(n, '\0');
    for (char& c : r) c = static_cast<char>(rng());
    records.push_back(std::move(r));
  }
  write_all(path("mixed"), records);
  for (size_t buffer : {size_t{64}, size_t{300}, size_t{4096}, size_t{10000}, size_t{256 << 10}}) {
    EXPECT_EQ(read_all(path("mixed"), Compression::kNone, buffer, true), records) << buffer;
  }
  // A file that ends exactly at the end of a block: 30 records of 116 bytes in 10 or 30 blocks.
  const std::vector<std::string> even(30, std::string(100, 'e'));
  write_all(path("even"), even);
  for (size_t buffer : {size_t{116}, size_t{348}}) {
    EXPECT_EQ(read_all(path("even"), Compression::kNone, buffer, true), even) << buffer;
  }
  // Compressed files ignore the option.
  write_all(path("mixed.gz"), records, Compression::kGzip);
  EXPECT_EQ(read_all(path("mixed.gz"), Compression::kGzip, 4096, true), records);
  for (int stop_after : {0, 1, 7}) {
    TFRecordReader reader(path("mixed"), {.buffer_size = 4096, .read_ahead = true});
    std::string record;
    for (int i = 0; i < stop_after; ++i) ASSERT_TRUE(reader.read(record));
  }  // Destroying the reader stops its helper thread.
}

TEST_F(TFRecordTest, TruncatedCompressedStreamsAreDataLoss) {
  std::vector<std::string> records;
  for (int i = 0; i < 200; ++i) records.push_back("record number " + std::to_string(i));
  for (Compression c : {Compression::kGzip, Compression::kZlib}) {
    write_all(path("full"), records, c);
    const std::string full = read_file(path("full"));
    for (size_t cut = 1; cut < full.size(); cut += (cut < 40 ? 1 : 13)) {
      write_file(path("cut"), std::string_view(full).substr(0, cut));
      std::vector<std::string> before;
      EXPECT_THROW(
          {
            TFRecordReader reader(path("cut"), c);
            std::string r;
            while (reader.read(r)) before.push_back(r);
          },
          DataLoss)
          << compression_name(c) << " cut at " << cut;
      ASSERT_LE(before.size(), records.size());
      for (size_t i = 0; i < before.size(); ++i) ASSERT_EQ(before[i], records[i]);
    }
  }
}

TEST_F(TFRecordTest, GarbageIsNeverARecord) {
  write_file(path("junk"), "this is not a TFRecord file");
  EXPECT_EQ(read_until_error(path("junk"), Compression::kNone)
                .rfind("corrupted record at 0 (Is this even a TFRecord file?)", 0),
            0u);
  // A gzip file read as uncompressed, as TensorFlow without compression_type.
  write_all(path("gz"), {"abc"}, Compression::kGzip);
  EXPECT_EQ(read_until_error(path("gz"), Compression::kNone).rfind("corrupted record at 0 (", 0),
            0u);
  // Not gzip at all, read as gzip.
  const std::string message = read_until_error(path("junk"), Compression::kGzip);
  EXPECT_EQ(message.rfind("inflate() failed with error -3", 0), 0u) << message;
  EXPECT_NE(message.find(path("junk")), std::string::npos);
  // 1..11 stray bytes after the last record: TensorFlow ignores them, we do not.
  write_all(path("stray"), {"abc"});
  write_file(path("stray"), read_file(path("stray")) + "12345");
  EXPECT_EQ(read_until_error(path("stray"), Compression::kNone).rfind("truncated record at 19 ", 0),
            0u);
}

TEST_F(TFRecordTest, WriterContracts) {
  TFRecordWriter writer(path("w"));
  writer.write("abc");
  writer.flush();
  EXPECT_EQ(read_file(path("w")).size(), 19u);  // Flushed bytes are in the file.
  writer.write(std::string(600 << 10, 'z'));    // Larger than the writer's buffer.
  EXPECT_EQ(writer.records_written(), 2);
  writer.close();
  writer.close();  // Idempotent.
  EXPECT_THROW(writer.write("late"), FailedPrecondition);
  const auto records = read_all(path("w"), Compression::kNone);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1], std::string(600 << 10, 'z'));

  {
    TFRecordWriter gz(path("flushed.gz"), Compression::kGzip);
    gz.write("abc");
    gz.flush();
    // After a sync flush the records so far are readable, though the stream is not finished.
    TFRecordReader reader(path("flushed.gz"), Compression::kGzip);
    std::string r;
    ASSERT_TRUE(reader.read(r));
    EXPECT_EQ(r, "abc");
  }  // The destructor finishes the stream.
  EXPECT_EQ(read_all(path("flushed.gz"), Compression::kGzip), std::vector<std::string>{"abc"});
  EXPECT_THROW(TFRecordWriter(path("x"), Compression::kAuto), InvalidArgument);
}

TEST(ShardedName, MatchesTensorFlow) {
  EXPECT_EQ(sharded_name("out/train", 0, 4), "out/train-00000-of-00004");
  EXPECT_EQ(sharded_name("p", 3, 10), "p-00003-of-00010");
  EXPECT_EQ(sharded_name("p", 123456, 200000), "p-123456-of-200000");
  EXPECT_THROW(sharded_name("p", 4, 4), InvalidArgument);
  EXPECT_THROW(sharded_name("p", -1, 4), InvalidArgument);
}

}  // namespace
}  // namespace sluice
