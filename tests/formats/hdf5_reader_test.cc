// Hdf5Reader: reads files written by sluice's libhdf5 writer (Hdf5File) and by h5py in both its
// default and libver='latest' formats (fixtures from tests/data/hdf5/make_hdf5_fixtures.py), says
// Unimplemented for the layouts it does not support, and turns truncated, bit-flipped and
// cyclic files into DataLoss naming the byte offset.
#include "sluice/formats/hdf5_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/core/file_system.h"
#include "sluice/formats/hdf5_file.h"
#include "tests/formats/testing.h"

namespace sluice {
namespace {

std::string fixture(const std::string& name) {
  return std::string(SLUICE_TEST_DATA_DIR) + "/hdf5/" + name;
}

// The fixture script's ramp(): base + 0.5·i.
std::vector<float> ramp(size_t n, float base) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base + 0.5f * static_cast<float>(i);
  return v;
}

std::vector<float> read(const Hdf5Reader& r, const std::string& path) {
  std::vector<float> v(static_cast<size_t>(r.dataset_shape(path).num_elements()));
  r.read_float32(path, v);
  return v;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class Hdf5ReaderTest : public testing::TempDirTest {
 protected:
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }
};

TEST_F(Hdf5ReaderTest, ReadsFilesOfSluicesOwnWriter) {
  {
    Hdf5File f = Hdf5File::create(path("own.h5"));
    f.write_string_list_attribute("/", "layer_names", {"conv2d", "dense", "flatten"});
    f.write_string_attribute("/", "backend", "tensorflow");
    f.write_float32("/conv2d/conv2d/kernel:0", Shape{3, 3, 1, 2}, ramp(18, 1.0f));
    f.write_float32("/dense/dense/bias:0", Shape{3}, ramp(3, -2.0f));
    f.write_float32("/scalar", Shape{}, ramp(1, 42.0f));
    f.create_group("/flatten");
    f.write_string_list_attribute("/flatten", "weight_names", {});
    f.close();
  }
  const Hdf5Reader r = Hdf5Reader::open(path("own.h5"));
  EXPECT_EQ(r.read_string_list_attribute("/", "layer_names"),
            (std::vector<std::string>{"conv2d", "dense", "flatten"}));
  EXPECT_EQ(r.read_string_attribute("", "backend"), "tensorflow");
  EXPECT_TRUE(r.is_group("/conv2d/conv2d"));
  EXPECT_FALSE(r.is_group("/conv2d/conv2d/kernel:0"));
  EXPECT_TRUE(r.exists("conv2d/conv2d/kernel:0"));
  EXPECT_FALSE(r.exists("/conv2d/nothing"));
  EXPECT_FALSE(r.exists("/conv2d/conv2d/kernel:0/below_a_dataset"));
  EXPECT_EQ(r.dataset_shape("/conv2d/conv2d/kernel:0"), (Shape{3, 3, 1, 2}));
  EXPECT_EQ(read(r, "/conv2d/conv2d/kernel:0"), ramp(18, 1.0f));
  EXPECT_EQ(read(r, "/dense/dense/bias:0"), ramp(3, -2.0f));
  EXPECT_EQ(r.dataset_shape("/scalar"), Shape{});
  EXPECT_EQ(read(r, "/scalar"), ramp(1, 42.0f));
  EXPECT_TRUE(r.read_string_list_attribute("/flatten", "weight_names").empty());
  std::vector<std::string> members = r.list_group("/");
  std::sort(members.begin(), members.end());
  EXPECT_EQ(members, (std::vector<std::string>{"conv2d", "dense", "flatten", "scalar"}));

  EXPECT_FALSE(r.has_attribute("/", "missing"));
  EXPECT_TRUE(contains(testing::error_of<NotFound>([&] { r.read_string_list_attribute("/", "x"); }),
                       "no attribute 'x'"));
  EXPECT_THROW(r.dataset_shape("/conv2d"), NotFound);
  EXPECT_THROW(r.read_string_list_attribute("/absent", "x"), NotFound);
  EXPECT_THROW(r.read_string_attribute("/", "layer_names"), InvalidArgument);
  std::vector<float> wrong(5);
  EXPECT_THROW(r.read_float32("/dense/dense/bias:0", wrong), InvalidArgument);
}

TEST_F(Hdf5ReaderTest, FindsMembersOfAMultiLevelGroupBTree) {
  // 8 names per symbol node and 32 nodes per B-tree node by default: 600 members need a tree of
  // more than one level.
  {
    Hdf5File f = Hdf5File::create(path("wide.h5"));
    for (int i = 0; i < 600; ++i) {
      f.write_float32("/wide/d" + std::to_string(i), Shape{}, ramp(1, static_cast<float>(i)));
    }
    f.close();
  }
  const Hdf5Reader r = Hdf5Reader::open(path("wide.h5"));
  EXPECT_EQ(r.list_group("/wide").size(), 600u);
  for (int i : {0, 1, 299, 599}) {
    EXPECT_EQ(read(r, "/wide/d" + std::to_string(i)), ramp(1, static_cast<float>(i)));
  }
  EXPECT_FALSE(r.exists("/wide/d600"));
}

// Everything in the fixtures this reader supports; throws what the first failing read throws.
void read_everything(const Hdf5Reader& r, bool latest) {
  for (const char* object : {"/", "/conv2d", "/dense", "/flatten", "/strings", "/padded"}) {
    for (const char* name : {"layer_names", "backend", "keras_version", "weight_names",
                             "vlen_scalar", "vlen_list", "fixed_scalar", "padding_5"}) {
      if (r.has_attribute(object, name)) r.read_string_list_attribute(object, name);
    }
  }
  for (const char* d :
       {"/conv2d/conv2d/kernel:0", "/conv2d/conv2d/bias:0", "/dense/dense/kernel:0",
        "/dense/dense/bias:0", "/numbers/float64", "/numbers/int32", "/numbers/uint8",
        "/numbers/scalar", "/numbers/compact", "/numbers/empty"}) {
    read(r, d);
  }
  if (!latest) {
    read(r, "/numbers/chunked");
    read(r, "/filtered/deflated");
    r.list_group("/many");
    r.read_string_list_attribute("/strings/dense_attributes", "a11");
  }
}

class H5pyFixtureTest : public Hdf5ReaderTest, public ::testing::WithParamInterface<const char*> {
 protected:
  bool latest() const { return std::string(GetParam()) == "h5py_latest.h5"; }
};

TEST_P(H5pyFixtureTest, HasTheExpectedFormatVersions) {
  const std::string bytes = read_whole_file(fixture(GetParam()));
  ASSERT_GT(bytes.size(), 16u);
  EXPECT_EQ(static_cast<int>(bytes[8]), latest() ? 3 : 0) << "superblock version";
  EXPECT_EQ(bytes.find("OHDR") != std::string::npos, latest()) << "v2 object headers";
  EXPECT_EQ(bytes.find("OCHK") != std::string::npos, latest()) << "v2 continuation blocks";
  EXPECT_EQ(bytes.find("SNOD") != std::string::npos, !latest()) << "symbol-table groups";
}

TEST_P(H5pyFixtureTest, ReadsKerasLayoutStringsAndNumbers) {
  const Hdf5Reader r = Hdf5Reader::open(fixture(GetParam()));
  EXPECT_EQ(r.read_string_list_attribute("/", "layer_names"),
            (std::vector<std::string>{"conv2d", "dense", "flatten"}));
  EXPECT_EQ(r.read_string_attribute("/", "backend"), "tensorflow");
  EXPECT_EQ(r.read_string_attribute("/", "keras_version"), "2.15.0");
  EXPECT_EQ(r.read_string_list_attribute("/conv2d", "weight_names"),
            (std::vector<std::string>{"conv2d/kernel:0", "conv2d/bias:0"}));
  EXPECT_TRUE(r.read_string_list_attribute("/flatten", "weight_names").empty());
  EXPECT_TRUE(r.is_group("/conv2d/conv2d"));
  EXPECT_EQ(r.dataset_shape("/conv2d/conv2d/kernel:0"), (Shape{3, 3, 1, 2}));
  EXPECT_EQ(read(r, "/conv2d/conv2d/kernel:0"), ramp(18, 1.0f));
  EXPECT_EQ(read(r, "/conv2d/conv2d/bias:0"), ramp(2, -1.0f));
  EXPECT_EQ(read(r, "/dense/dense/kernel:0"), ramp(12, 6.0f));
  EXPECT_EQ(read(r, "/dense/dense/bias:0"), ramp(3, 7.0f));

  // Variable-length UTF-8 strings live in the global heap.
  EXPECT_EQ(r.read_string_attribute("/strings", "vlen_scalar"), "hello, sluice");
  EXPECT_EQ(r.read_string_list_attribute("/strings", "vlen_list"),
            (std::vector<std::string>{"alpha", "beta", "",
                                      "delta \xc3\xbcn\xc3\xaf"
                                      "code"}));
  EXPECT_EQ(r.read_string_attribute("/strings", "fixed_scalar"), "fixed");
  // Attributes that libhdf5 placed in continuation blocks.
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(r.read_string_attribute("/padded", "padding_" + std::to_string(i)),
              std::string(300, 'x') + std::to_string(i));
  }

  EXPECT_EQ(read(r, "/numbers/float64"), ramp(6, 0.25f));
  EXPECT_EQ(read(r, "/numbers/int32"), (std::vector<float>{-3, -2, -1, 0, 1, 2}));
  EXPECT_EQ(read(r, "/numbers/uint8"), (std::vector<float>{250, 251, 252, 253, 254, 255}));
  EXPECT_EQ(r.dataset_shape("/numbers/scalar"), Shape{});
  EXPECT_EQ(read(r, "/numbers/scalar"), (std::vector<float>{42.5f}));
  EXPECT_EQ(read(r, "/numbers/compact"), ramp(5, 3.0f));
  EXPECT_EQ(r.dataset_shape("/numbers/empty"), (Shape{0, 4}));
  EXPECT_TRUE(read(r, "/numbers/empty").empty());
  EXPECT_THROW(r.read_string_list_attribute("/conv2d/conv2d/kernel:0", "x"), NotFound);
  read_everything(r, latest());
}

TEST_P(H5pyFixtureTest, ChunkedDatasetsWithDeflateAndShuffle) {
  const Hdf5Reader r = Hdf5Reader::open(fixture(GetParam()));
  if (latest()) {
    // libver='latest' indexes chunks with layout version 4 structures, not supported.
    std::vector<float> out(64);
    EXPECT_TRUE(
        contains(testing::error_of<Unimplemented>([&] { r.read_float32("/numbers/chunked", out); }),
                 "/numbers/chunked uses chunked storage with a version 4 chunk index"));
    return;
  }
  EXPECT_EQ(read(r, "/numbers/chunked"), ramp(64, 0.0f));
  EXPECT_EQ(r.dataset_shape("/filtered/deflated"), (Shape{7, 9}));
  EXPECT_EQ(read(r, "/filtered/deflated"), ramp(63, -5.0f));
  std::vector<float> four(4);
  EXPECT_TRUE(contains(
      testing::error_of<Unimplemented>([&] { r.read_float32("/filtered/fletcher32", four); }),
      "/filtered/fletcher32 uses HDF5 filter 3"));
}

TEST_P(H5pyFixtureTest, UnsupportedLayoutsAreUnimplementedNamingTheObject) {
  const Hdf5Reader r = Hdf5Reader::open(fixture(GetParam()));
  std::vector<float> four(4);
  EXPECT_TRUE(contains(
      testing::error_of<Unimplemented>([&] { r.read_float32("/numbers/big_endian", four); }),
      "/numbers/big_endian has a big-endian"));
  if (latest()) {
    // More than 8 links or attributes: libhdf5 moves them to a fractal heap.
    EXPECT_TRUE(contains(testing::error_of<Unimplemented>([&] { r.exists("/many/d1"); }),
                         "group /many keeps its links in dense storage"));
    EXPECT_TRUE(contains(testing::error_of<Unimplemented>(
                             [&] { r.has_attribute("/strings/dense_attributes", "a01"); }),
                         "/strings/dense_attributes keeps its attributes in dense storage"));
  } else {
    std::vector<std::string> many = r.list_group("/many");
    EXPECT_EQ(many.size(), 10u);
    EXPECT_EQ(read(r, "/many/d7"), (std::vector<float>{7.0f}));
    EXPECT_EQ(r.read_string_attribute("/strings/dense_attributes", "a11"), "11");
  }
}

TEST_P(H5pyFixtureTest, TruncatedFilesAreDataLossNamingTheOffset) {
  const std::string bytes = read_whole_file(fixture(GetParam()));
  for (size_t cut : {size_t{20}, size_t{47}, size_t{100}, bytes.size() / 3, bytes.size() / 2,
                     bytes.size() - 1}) {
    const std::string file = write("cut.h5", bytes.substr(0, cut));
    const std::string message =
        testing::error_of<DataLoss>([&] { read_everything(Hdf5Reader::open(file), latest()); });
    EXPECT_TRUE(contains(message, "byte offset")) << "cut at " << cut << ": " << message;
  }
  EXPECT_TRUE(contains(
      testing::error_of<DataLoss>([&] { Hdf5Reader::open(write("tiny.h5", bytes.substr(0, 4))); }),
      "is not an HDF5 file"));
}

INSTANTIATE_TEST_SUITE_P(H5py, H5pyFixtureTest,
                         ::testing::Values("h5py_default.h5", "h5py_latest.h5"));

void put_u64(std::string& bytes, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// A v0 file cut short with its end-of-file address patched to match, so the damage is found by
// the structures that point past the end rather than by the superblock.
TEST_F(Hdf5ReaderTest, TruncationBehindACorrectedSuperblockIsStillDataLoss) {
  const std::string bytes = read_whole_file(fixture("h5py_default.h5"));
  for (size_t cut = 800; cut < bytes.size(); cut += bytes.size() / 7) {
    std::string damaged = bytes.substr(0, cut);
    put_u64(damaged, 40, cut);  // v0: end-of-file address after base and free-space addresses.
    const std::string file = write("cut.h5", damaged);
    const std::string message =
        testing::error_of<DataLoss>([&] { read_everything(Hdf5Reader::open(file), false); });
    EXPECT_TRUE(contains(message, "byte offset")) << "cut at " << cut << ": " << message;
  }
}

TEST_F(Hdf5ReaderTest, BadChecksumsAreDataLoss) {
  const std::string bytes = read_whole_file(fixture("h5py_latest.h5"));
  std::string superblock = bytes;
  superblock[12] ^= 0x01;  // Inside the base address, covered by the superblock checksum.
  std::string message =
      testing::error_of<DataLoss>([&] { Hdf5Reader::open(write("sb.h5", superblock)); });
  EXPECT_TRUE(contains(message, "superblock checksum mismatch (byte offset 44)")) << message;

  std::string header = bytes;
  const size_t root = bytes.find("OHDR");
  ASSERT_NE(root, std::string::npos);
  header[root + 40] ^= 0x01;  // Among the root group's messages.
  const Hdf5Reader r = Hdf5Reader::open(write("ohdr.h5", header));
  message = testing::error_of<DataLoss>([&] { r.exists("/conv2d"); });
  EXPECT_TRUE(contains(message, "object header checksum mismatch")) << message;
  EXPECT_TRUE(contains(message, ": /: ")) << message;
}

TEST_F(Hdf5ReaderTest, AddressPastTheEndIsDataLossNamingTheField) {
  std::string bytes = read_whole_file(fixture("h5py_default.h5"));
  put_u64(bytes, 64, uint64_t{1} << 40);  // v0: the root symbol table entry's header address.
  const Hdf5Reader r = Hdf5Reader::open(write("root.h5", bytes));
  const std::string message = testing::error_of<DataLoss>([&] { r.exists("/conv2d"); });
  EXPECT_TRUE(contains(message, "lies past the end of the file")) << message;
  EXPECT_TRUE(contains(message, "(byte offset 64)")) << message;
}

// The first v1 continuation message of the file: type 0x10, 16 bytes of data (address, length).
size_t find_continuation(const std::string& bytes) {
  const std::string prefix("\x10\x00\x10\x00\x00\x00\x00\x00", 8);
  for (size_t at = bytes.find(prefix); at != std::string::npos; at = bytes.find(prefix, at + 1)) {
    uint64_t address = 0;
    std::memcpy(&address, bytes.data() + at + 8, 8);
    if (address < bytes.size() && address > at) return at;
  }
  return std::string::npos;
}

TEST_F(Hdf5ReaderTest, ContinuationCyclesAndOverrunsAreDataLoss) {
  const std::string bytes = read_whole_file(fixture("h5py_default.h5"));
  const size_t at = find_continuation(bytes);
  ASSERT_NE(at, std::string::npos);

  std::string cycle = bytes;
  put_u64(cycle, at + 8, at);  // The continuation points back into its own block.
  const std::string cycle_file = write("cycle.h5", cycle);
  std::string message =
      testing::error_of<DataLoss>([&] { read_everything(Hdf5Reader::open(cycle_file), false); });
  EXPECT_TRUE(contains(message, "(a cycle)")) << message;
  EXPECT_TRUE(contains(message, ": /")) << message;  // The object whose header it is.
  EXPECT_TRUE(contains(message, "byte offset " + std::to_string(at))) << message;

  std::string overrun = bytes;
  put_u64(overrun, at + 8, bytes.size() - 8);  // 8 bytes before the end, for a longer block.
  const std::string overrun_file = write("overrun.h5", overrun);
  message =
      testing::error_of<DataLoss>([&] { read_everything(Hdf5Reader::open(overrun_file), false); });
  EXPECT_TRUE(contains(message, "lies past the end of the file")) << message;
  EXPECT_TRUE(contains(message, "byte offset " + std::to_string(at + 8))) << message;
}

TEST_F(Hdf5ReaderTest, MissingAndForeignFiles) {
  EXPECT_TRUE(contains(testing::error_of<NotFound>([&] { Hdf5Reader::open(path("absent.h5")); }),
                       "absent.h5"));
  EXPECT_THROW(Hdf5Reader::open(write("text.h5", std::string(4096, 'a'))), DataLoss);
  EXPECT_THROW(Hdf5Reader::from_bytes("empty", ""), DataLoss);
}

}  // namespace
}  // namespace sluice
