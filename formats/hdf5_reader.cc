#include "formats/hdf5_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/errors.h"
#include "core/strings.h"
#include "formats/file_bytes.h"

// Field layouts follow the HDF5 File Format Specification (version 3.0); section names are cited
// where a layout is decoded.

namespace sluice {

struct Hdf5Reader::File {
  std::string path;
  std::string bytes;
  uint64_t base = 0;  // Absolute offset that file addresses are relative to.
  int offset_size = 8;
  int length_size = 8;
  uint64_t root = 0;        // File address of the root group's object header.
  uint64_t root_field = 0;  // Where the superblock stores it.

  uint64_t size() const { return bytes.size(); }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(bytes.data()); }
  uint64_t undefined() const {
    return offset_size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * offset_size)) - 1;
  }

  [[noreturn]] void corrupt(std::string_view object, uint64_t offset, std::string_view what) const {
    throw DataLoss(str_cat("corrupt HDF5 file ", path, ": ", object, ": ", what, " (byte offset ",
                           offset, ")"));
  }

  // The absolute offset of file address `address` after checking that `length` bytes from there
  // lie inside the file. `field` is where the address was read, for the message.
  uint64_t locate(uint64_t address, uint64_t length, std::string_view object, uint64_t field,
                  std::string_view what) const {
    if (address == undefined()) corrupt(object, field, str_cat(what, " has an undefined address"));
    if (address > size() - base || length > size() - base - address) {
      corrupt(object, field,
              str_cat(what, " at address ", address, " (", length,
                      " bytes) lies past the end of the file (", size(), " bytes)"));
    }
    return base + address;
  }
};

namespace {

using File = Hdf5Reader::File;

// Bounds on structures whose size the file states, beyond "fits in the file".
constexpr size_t kMaxHeaderBlocks = 4096;   // Object header continuation blocks per object.
constexpr size_t kMaxBTreeNodes = 1 << 20;  // B-tree and symbol nodes visited per group.
constexpr int kMaxDataspaceRank = 32;       // The format's own limit.

// Message types (specification section IV.A.2).
constexpr int kDataspace = 0x01;
constexpr int kLinkInfo = 0x02;
constexpr int kDatatype = 0x03;
constexpr int kLink = 0x06;
constexpr int kLayout = 0x08;
constexpr int kAttribute = 0x0C;
constexpr int kContinuation = 0x10;
constexpr int kSymbolTable = 0x11;
constexpr int kFilterPipeline = 0x0B;
constexpr int kAttributeInfo = 0x15;

// Filters of chunked datasets (IV.A.2.l) that the reader undoes.
constexpr int kDeflate = 1;
constexpr int kShuffle = 2;
// A decoded chunk is held in memory whole; larger chunks are refused rather than allocated.
constexpr uint64_t kMaxChunkBytes = uint64_t{64} << 20;

constexpr uint8_t kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

uint32_t rotate(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

// Bob Jenkins' lookup3 hashlittle() with seed 0, byte by byte: the checksum of every v2 metadata
// structure.
uint32_t lookup3(const uint8_t* k, size_t length) {
  uint32_t a = 0xdeadbeef + static_cast<uint32_t>(length);
  uint32_t b = a;
  uint32_t c = a;
  auto mix = [&] {
    a -= c, a ^= rotate(c, 4), c += b;
    b -= a, b ^= rotate(a, 6), a += c;
    c -= b, c ^= rotate(b, 8), b += a;
    a -= c, a ^= rotate(c, 16), c += b;
    b -= a, b ^= rotate(a, 19), a += c;
    c -= b, c ^= rotate(b, 4), b += a;
  };
  auto word = [](const uint8_t* p, size_t n) {
    uint32_t w = 0;
    for (size_t i = 0; i < n; ++i) w |= static_cast<uint32_t>(p[i]) << (8 * i);
    return w;
  };
  while (length > 12) {
    a += word(k, 4);
    b += word(k + 4, 4);
    c += word(k + 8, 4);
    mix();
    length -= 12;
    k += 12;
  }
  if (length == 0) return c;
  a += word(k, std::min<size_t>(length, 4));
  if (length > 4) b += word(k + 4, std::min<size_t>(length - 4, 4));
  if (length > 8) c += word(k + 8, length - 8);
  c ^= b, c -= rotate(b, 14);
  a ^= c, a -= rotate(c, 11);
  b ^= a, b -= rotate(a, 25);
  c ^= b, c -= rotate(b, 16);
  a ^= c, a -= rotate(c, 4);
  b ^= a, b -= rotate(a, 14);
  c ^= b, c -= rotate(b, 24);
  return c;
}

// Reads little-endian fields from [pos, end) of the file, throwing DataLoss naming the object and
// the offset when a field would run past `end`.
class Cursor {
 public:
  Cursor(const File& file, std::string_view object, std::string_view what, uint64_t begin,
         uint64_t end)
      : file_(&file), object_(object), what_(what), pos_(begin), end_(end) {}

  uint64_t pos() const { return pos_; }
  uint64_t end() const { return end_; }
  uint64_t remaining() const { return end_ - pos_; }
  std::string_view object() const { return object_; }
  const File& file() const { return *file_; }

  void need(uint64_t n) const {
    if (n > remaining()) {
      file_->corrupt(object_, pos_,
                     str_cat(what_, " needs ", n, " more bytes but has ", remaining()));
    }
  }
  uint64_t uint(int n) {
    need(n);
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(file_->data()[pos_ + i]) << (8 * i);
    pos_ += n;
    return v;
  }
  uint8_t u8() { return static_cast<uint8_t>(uint(1)); }
  uint16_t u16() { return static_cast<uint16_t>(uint(2)); }
  uint32_t u32() { return static_cast<uint32_t>(uint(4)); }
  uint64_t address() { return uint(file_->offset_size); }
  uint64_t length() { return uint(file_->length_size); }
  void skip(uint64_t n) {
    need(n);
    pos_ += n;
  }
  std::string_view bytes(uint64_t n) {
    need(n);
    std::string_view v(file_->bytes.data() + pos_, n);
    pos_ += n;
    return v;
  }
  // The next n bytes as a cursor of their own (describing `what`), skipped here.
  Cursor sub(uint64_t n, std::string_view what) {
    need(n);
    Cursor c(*file_, object_, what, pos_, pos_ + n);
    pos_ += n;
    return c;
  }
  void signature(std::string_view expected) {
    const uint64_t at = pos_;
    if (bytes(expected.size()) != expected) {
      file_->corrupt(object_, at, str_cat(what_, " lacks its signature '", expected, "'"));
    }
  }

 private:
  const File* file_;
  std::string_view object_;
  std::string_view what_;
  uint64_t pos_;
  uint64_t end_;
};

struct Message {
  int type;
  uint8_t flags;
  uint64_t begin;  // Absolute offset of the message's data.
  uint64_t size;
};

// An object: its path (for messages), the address of its header and the header's messages.
struct Object {
  std::string path;
  uint64_t address;
  std::vector<Message> messages;

  const Message* find(int type) const {
    for (const Message& m : messages) {
      if (m.type == type) return &m;
    }
    return nullptr;
  }
  bool is_group() const { return find(kSymbolTable) || find(kLinkInfo) || find(kLink); }
};

Cursor message_cursor(const File& f, const Object& o, const Message& m, std::string_view what) {
  return Cursor(f, o.path, what, m.begin, m.begin + m.size);
}

// IV.A.1: reads the object header at `address`, following continuation blocks. Blocks may not
// overlap one another, which bounds the work by the file's size and stops continuation cycles.
std::vector<Message> read_object_header(const File& f, uint64_t address, std::string_view object,
                                        uint64_t field) {
  const uint64_t start = f.locate(address, 16, object, field, "object header");
  std::vector<Message> messages;
  std::map<uint64_t, uint64_t> blocks;  // begin -> end of the blocks read so far.
  auto claim = [&](uint64_t begin, uint64_t end, uint64_t from) {
    auto next = blocks.lower_bound(begin);
    const bool overlaps_next = next != blocks.end() && next->first < end;
    const bool overlaps_prev = next != blocks.begin() && std::prev(next)->second > begin;
    if (overlaps_next || overlaps_prev) {
      f.corrupt(object, from,
                str_cat("object header continuation to byte offset ", begin,
                        " overlaps a block of the same header (a cycle)"));
    }
    if (blocks.size() >= kMaxHeaderBlocks) {
      f.corrupt(object, from, str_cat("object header has more than ", kMaxHeaderBlocks, " blocks"));
    }
    blocks.emplace(begin, end);
  };

  const bool v2 = std::memcmp(f.data() + start, "OHDR", 4) == 0;
  bool creation_order = false;
  // Pending blocks of messages: [begin, end).
  std::vector<std::pair<uint64_t, uint64_t>> pending;
  if (v2) {
    Cursor c(f, object, "object header", start, f.size());
    c.skip(4);
    if (const int version = c.u8(); version != 2) {
      f.corrupt(object, start + 4, str_cat("object header version ", version, " is unknown"));
    }
    const uint8_t flags = c.u8();
    creation_order = flags & 0x04;
    if (flags & 0x20) c.skip(16);  // Access, modification, change and birth times.
    if (flags & 0x10) c.skip(4);   // Attribute storage phase change values.
    const uint64_t chunk = c.uint(1 << (flags & 3));
    if (c.remaining() < 4 || chunk > c.remaining() - 4) {
      f.corrupt(object, c.pos(), "object header runs past the end of the file");
    }
    const uint64_t end = c.pos() + chunk;
    const uint32_t stored = Cursor(f, object, "object header", end, end + 4).u32();
    if (lookup3(f.data() + start, end - start) != stored) {
      f.corrupt(object, end, "object header checksum mismatch");
    }
    claim(start, end + 4, field);
    pending.emplace_back(c.pos(), end);
  } else {
    Cursor c(f, object, "object header", start, start + 16);
    if (const int version = c.u8(); version != 1) {
      f.corrupt(object, start, str_cat("object header version ", version, " is unknown"));
    }
    c.skip(7);  // Reserved, message count, reference count: the blocks say how far to read.
    const uint64_t size = c.u32();
    const uint64_t begin = start + 16;
    if (size > f.size() - begin) {
      f.corrupt(object, start + 8,
                str_cat("object header of ", size, " bytes runs past the end of the file"));
    }
    claim(start, begin + size, field);
    pending.emplace_back(begin, begin + size);
  }

  const int prefix = v2 ? (creation_order ? 6 : 4) : 8;
  for (size_t next = 0; next < pending.size(); ++next) {
    Cursor c(f, object, "object header message", pending[next].first, pending[next].second);
    // A tail shorter than a message prefix is the gap v2 headers may leave.
    while (c.remaining() >= static_cast<uint64_t>(prefix)) {
      const uint64_t at = c.pos();
      Message m{};
      m.type = v2 ? c.u8() : c.u16();
      const uint64_t size = c.u16();
      m.flags = c.u8();
      c.skip(v2 ? prefix - 4 : 3);
      m.begin = c.pos();
      m.size = size;
      c.skip(size);
      if (m.type != kContinuation) {
        messages.push_back(m);
        continue;
      }
      Cursor cont(f, object, "continuation message", m.begin, m.begin + m.size);
      const uint64_t field_at = cont.pos();
      const uint64_t block_address = cont.address();
      const uint64_t length = cont.length();
      const uint64_t block =
          f.locate(block_address, length, object, field_at, "object header continuation block");
      claim(block, block + length, at);
      if (v2) {
        Cursor b(f, object, "continuation block", block, block + length);
        b.signature("OCHK");
        b.need(4);
        const uint64_t end = block + length - 4;
        const uint32_t stored = Cursor(f, object, "continuation block", end, end + 4).u32();
        if (lookup3(f.data() + block, end - block) != stored) {
          f.corrupt(object, end, "object header continuation block checksum mismatch");
        }
        pending.emplace_back(block + 4, end);
      } else {
        pending.emplace_back(block, block + length);
      }
    }
  }
  return messages;
}

Object read_object(const File& f, std::string path, uint64_t address, uint64_t field) {
  std::vector<Message> messages = read_object_header(f, address, path, field);
  return Object{std::move(path), address, std::move(messages)};
}

// III.D: a local heap's data segment, where old-style groups keep their link names.
struct LocalHeap {
  uint64_t begin;
  uint64_t end;
};

LocalHeap read_local_heap(const File& f, std::string_view object, uint64_t address,
                          uint64_t field) {
  const uint64_t header = 8 + 2 * f.length_size + f.offset_size;
  const uint64_t start = f.locate(address, header, object, field, "local heap");
  Cursor c(f, object, "local heap", start, start + header);
  c.signature("HEAP");
  c.skip(4);  // Version, reserved.
  const uint64_t size = c.length();
  c.length();  // Free list head.
  const uint64_t data_field = c.pos();
  const uint64_t data = c.address();
  const uint64_t begin = f.locate(data, size, object, data_field, "local heap data segment");
  return {begin, begin + size};
}

std::string_view heap_name(const File& f, std::string_view object, const LocalHeap& heap,
                           uint64_t offset, uint64_t field) {
  if (offset >= heap.end - heap.begin) {
    f.corrupt(object, field, str_cat("link name offset ", offset, " lies outside the local heap"));
  }
  const char* first = f.bytes.data() + heap.begin + offset;
  const char* last = f.bytes.data() + heap.end;
  const char* nul = std::find(first, last, '\0');
  if (nul == last) f.corrupt(object, heap.begin + offset, "link name is not NUL-terminated");
  return std::string_view(first, static_cast<size_t>(nul - first));
}

// A group member: its name, link type (0 hard, 1 soft, 64+ external) and object header address.
struct Member {
  std::string_view name;
  int link_type;
  uint64_t address;
  uint64_t field;  // Where the address was read.
};
using MemberVisitor = std::function<bool(const Member&)>;

// III.A.1 and III.C: walks an old-style group's v1 B-tree of symbol nodes, calling visit for each
// entry until it returns true. Nodes must descend one level at a time and are visited at most
// once, so a malformed tree cannot loop.
bool visit_symbol_table(const File& f, const Object& group, const Message& m,
                        const MemberVisitor& visit) {
  Cursor c = message_cursor(f, group, m, "symbol table message");
  const uint64_t tree_field = c.pos();
  const uint64_t tree = c.address();
  const uint64_t heap_field = c.pos();
  const LocalHeap heap = read_local_heap(f, group.path, c.address(), heap_field);

  struct Pending {
    uint64_t address;
    uint64_t field;
    int level;  // -1: the root, any level; -2: a symbol node.
  };
  std::vector<Pending> stack{{tree, tree_field, -1}};
  std::unordered_set<uint64_t> seen;
  const uint64_t entry_size = 2 * static_cast<uint64_t>(f.offset_size) + 24;
  while (!stack.empty()) {
    const Pending node = stack.back();
    stack.pop_back();
    if (!seen.insert(node.address).second || seen.size() > kMaxBTreeNodes) {
      f.corrupt(group.path, node.field,
                str_cat("group B-tree reaches node ", node.address, " twice (a cycle)"));
    }
    if (node.level == -2) {
      const uint64_t start = f.locate(node.address, 8, group.path, node.field, "symbol node");
      Cursor s(f, group.path, "symbol node", start, f.size());
      s.signature("SNOD");
      s.skip(2);  // Version, reserved.
      const uint64_t count = s.u16();
      s.need(count * entry_size);
      for (uint64_t i = 0; i < count; ++i) {
        Cursor e = s.sub(entry_size, "symbol table entry");
        const uint64_t name_field = e.pos();
        const uint64_t name_offset = e.address();
        const uint64_t address_field = e.pos();
        const uint64_t address = e.address();
        const uint32_t cache = e.u32();
        const Member member{heap_name(f, group.path, heap, name_offset, name_field),
                            cache == 2 ? 1 : 0, address, address_field};
        if (visit(member)) return true;
      }
      continue;
    }
    const uint64_t header = 8 + 2 * static_cast<uint64_t>(f.offset_size);
    const uint64_t start = f.locate(node.address, header, group.path, node.field, "B-tree node");
    Cursor n(f, group.path, "B-tree node", start, f.size());
    n.signature("TREE");
    if (const int type = n.u8(); type != 0) {
      f.corrupt(group.path, start + 4, str_cat("group B-tree node has type ", type));
    }
    const int level = n.u8();
    if (node.level >= 0 && level != node.level) {
      f.corrupt(group.path, start + 5,
                str_cat("B-tree node has level ", level, ", expected ", node.level));
    }
    const uint64_t entries = n.u16();
    n.skip(2 * static_cast<uint64_t>(f.offset_size));  // Siblings.
    n.need((entries + 1) * f.length_size + entries * f.offset_size);
    n.length();  // Keys bound the names below; every child is searched, so they are not needed.
    for (uint64_t i = 0; i < entries; ++i) {
      const uint64_t child_field = n.pos();
      const uint64_t child = n.address();
      n.length();
      stack.push_back({child, child_field, level == 0 ? -2 : level - 1});
    }
  }
  return false;
}

// IV.A.2.g: a link message of a compact new-style group.
Member parse_link(const File& f, const Object& group, const Message& m) {
  Cursor c = message_cursor(f, group, m, "link message");
  if (const int version = c.u8(); version != 1) {
    f.corrupt(group.path, m.begin, str_cat("link message version ", version, " is unknown"));
  }
  const uint8_t flags = c.u8();
  const int type = (flags & 0x08) ? c.u8() : 0;
  if (flags & 0x04) c.skip(8);  // Creation order.
  if (flags & 0x10) c.skip(1);  // Name character set.
  const uint64_t name_length = c.uint(1 << (flags & 3));
  Member member{c.bytes(name_length), type, 0, 0};
  if (type == 0) {
    member.field = c.pos();
    member.address = c.address();
  }
  return member;
}

// Calls visit for each member of `group` until it returns true.
bool visit_members(const File& f, const Object& group, const MemberVisitor& visit) {
  if (const Message* m = group.find(kSymbolTable)) return visit_symbol_table(f, group, *m, visit);
  if (const Message* m = group.find(kLinkInfo)) {
    Cursor c = message_cursor(f, group, *m, "link info message");
    c.skip(1);
    const uint8_t flags = c.u8();
    if (flags & 0x01) c.skip(8);
    if (c.address() != f.undefined()) {
      throw Unimplemented(str_cat("HDF5 file ", f.path, ": group ", group.path,
                                  " keeps its links in dense storage (a fractal heap), which "
                                  "sluice's HDF5 reader does not support"));
    }
  }
  for (const Message& m : group.messages) {
    if (m.type == kLink && visit(parse_link(f, group, m))) return true;
  }
  return false;
}

std::string child_path(std::string_view parent, std::string_view name) {
  return parent == "/" ? str_cat("/", name) : str_cat(parent, "/", name);
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > pos) parts.push_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return parts;
}

// The object at `path`, or nothing when a component is missing or not a group.
std::optional<Object> resolve(const File& f, std::string_view path) {
  Object object = read_object(f, "/", f.root, f.root_field);
  for (std::string_view part : split_path(path)) {
    if (!object.is_group()) return std::nullopt;
    std::optional<Member> found;
    visit_members(f, object, [&](const Member& m) {
      if (m.name != part) return false;
      found = m;
      return true;
    });
    if (!found) return std::nullopt;
    std::string next = child_path(object.path, part);
    if (found->link_type != 0) {
      throw Unimplemented(str_cat("HDF5 file ", f.path, ": ", next,
                                  " is a soft or external link, which sluice's HDF5 reader does "
                                  "not follow"));
    }
    object = read_object(f, std::move(next), found->address, found->field);
  }
  return object;
}

std::string normalize(std::string_view path) {
  std::string p;
  for (std::string_view part : split_path(path)) p += str_cat("/", part);
  return p.empty() ? "/" : p;
}

std::string where(const File& f, std::string_view object) {
  return str_cat(f.path, ":", normalize(object));
}

// IV.A.2.d: the datatype fields sluice looks at.
struct Datatype {
  int cls = 0;
  uint32_t bits = 0;
  uint32_t size = 0;
};

Datatype parse_datatype(Cursor c) {
  const uint64_t at = c.pos();
  Datatype t;
  const uint8_t class_version = c.u8();
  t.cls = class_version & 0x0f;
  t.bits = static_cast<uint32_t>(c.uint(3));
  t.size = c.u32();
  if (t.size == 0) {
    c.file().corrupt(c.object(), at, "datatype has element size 0");
  }
  return t;
}

// IV.A.2.b: scalar, simple or null dataspaces.
struct Dataspace {
  bool null = false;
  std::vector<uint64_t> dims;
  uint64_t count = 1;
};

Dataspace parse_dataspace(const File& f, Cursor c) {
  const uint64_t at = c.pos();
  const int version = c.u8();
  const int rank = c.u8();
  c.u8();  // Flags: maximum dimensions follow the dimensions; they are not needed.
  Dataspace s;
  if (version == 1) {
    c.skip(5);
  } else if (version == 2) {
    const int type = c.u8();
    if (type > 2) f.corrupt(c.object(), at + 3, str_cat("dataspace type ", type, " is unknown"));
    s.null = type == 2;
  } else {
    f.corrupt(c.object(), at, str_cat("dataspace version ", version, " is unknown"));
  }
  if (rank > kMaxDataspaceRank) {
    f.corrupt(c.object(), at + 1, str_cat("dataspace rank ", rank, " exceeds 32"));
  }
  s.count = s.null ? 0 : 1;
  for (int i = 0; i < rank; ++i) {
    const uint64_t dim_at = c.pos();
    const uint64_t dim = c.length();
    if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        (dim != 0 && s.count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / dim)) {
      f.corrupt(c.object(), dim_at, "dataspace has more than 2^63 elements");
    }
    s.dims.push_back(dim);
    s.count *= dim;
  }
  return s;
}

// IV.A.2.m: an attribute message, its data left in place.
struct Attribute {
  std::string_view name;
  bool shared = false;
  uint64_t type_begin = 0, type_end = 0;
  uint64_t space_begin = 0, space_end = 0;
  uint64_t data_begin = 0, data_end = 0;
};

Attribute parse_attribute(const File& f, const Object& o, const Message& m) {
  Cursor c = message_cursor(f, o, m, "attribute message");
  const int version = c.u8();
  if (version < 1 || version > 3) {
    f.corrupt(o.path, m.begin, str_cat("attribute message version ", version, " is unknown"));
  }
  Attribute a;
  const uint8_t flags = c.u8();
  a.shared = version >= 2 && (flags & 0x03);
  const uint64_t name_size = c.u16();
  const uint64_t type_size = c.u16();
  const uint64_t space_size = c.u16();
  if (version == 3) c.u8();  // Name character set.
  // Version 1 pads each part to a multiple of 8 bytes.
  auto padded = [&](uint64_t n) { return version == 1 ? (n + 7) / 8 * 8 : n; };
  std::string_view name = c.bytes(padded(name_size)).substr(0, name_size);
  a.name = name.substr(0, name.find('\0'));
  Cursor type = c.sub(padded(type_size), "attribute datatype");
  a.type_begin = type.pos();
  a.type_end = a.type_begin + type_size;
  Cursor space = c.sub(padded(space_size), "attribute dataspace");
  a.space_begin = space.pos();
  a.space_end = a.space_begin + space_size;
  a.data_begin = c.pos();
  a.data_end = c.end();
  return a;
}

// The attribute `name` of `o`, if any.
std::optional<Attribute> find_attribute(const File& f, const Object& o, std::string_view name) {
  for (const Message& m : o.messages) {
    if (m.type != kAttribute) continue;
    Attribute a = parse_attribute(f, o, m);
    if (a.name == name) return a;
  }
  if (const Message* m = o.find(kAttributeInfo)) {
    Cursor c = message_cursor(f, o, *m, "attribute info message");
    c.skip(1);
    const uint8_t flags = c.u8();
    if (flags & 0x01) c.skip(2);
    if (c.address() != f.undefined()) {
      throw Unimplemented(str_cat("HDF5 file ", f.path, ": ", o.path,
                                  " keeps its attributes in dense storage (a fractal heap), which "
                                  "sluice's HDF5 reader does not support"));
    }
  }
  return std::nullopt;
}

// III.E: the objects of the global heap collection at `address`, by index, as [begin, end).
using Collection = std::unordered_map<uint32_t, std::pair<uint64_t, uint64_t>>;

Collection read_collection(const File& f, std::string_view object, uint64_t address,
                           uint64_t field) {
  const uint64_t header = 8 + static_cast<uint64_t>(f.length_size);
  const uint64_t start = f.locate(address, header, object, field, "global heap collection");
  Cursor h(f, object, "global heap collection", start, start + header);
  h.signature("GCOL");
  h.skip(4);  // Version, reserved.
  const uint64_t size = h.length();
  if (size < header) f.corrupt(object, start + 8, "global heap collection is too small");
  f.locate(address, size, object, field, "global heap collection");
  Collection objects;
  Cursor c(f, object, "global heap object", start + header, start + size);
  const uint64_t object_header = 8 + static_cast<uint64_t>(f.length_size);
  while (c.remaining() >= object_header) {
    const uint32_t index = c.u16();
    if (index == 0) break;  // Free space: the end of the objects.
    c.skip(6);              // Reference count, reserved.
    const uint64_t length = c.length();
    const uint64_t begin = c.pos();
    c.skip(length);
    c.skip(std::min<uint64_t>((8 - length % 8) % 8, c.remaining()));
    objects.emplace(index, std::make_pair(begin, begin + length));
  }
  return objects;
}

std::vector<std::string> attribute_strings(const File& f, const Object& o, const Attribute& a,
                                           std::string_view name) {
  const std::string label = str_cat("attribute '", name, "' on ", where(f, o.path));
  if (a.shared) {
    throw Unimplemented(str_cat(label,
                                " uses a shared datatype or dataspace, which sluice's HDF5 "
                                "reader does not support"));
  }
  const Datatype type =
      parse_datatype(Cursor(f, o.path, "attribute datatype", a.type_begin, a.type_end));
  const Dataspace space =
      parse_dataspace(f, Cursor(f, o.path, "attribute dataspace", a.space_begin, a.space_end));
  const uint64_t data_size = a.data_end - a.data_begin;
  const bool vlen_string = type.cls == 9 && (type.bits & 0x0f) == 1;
  if (type.cls != 3 && !vlen_string) {
    // h5py stores an empty Python list as an empty float64 array.
    if (space.count == 0 && (type.cls == 0 || type.cls == 1)) return {};
    throw InvalidArgument(str_cat(label, " is not a string attribute"));
  }
  const uint64_t width = vlen_string ? 8 + static_cast<uint64_t>(f.offset_size) : type.size;
  if (vlen_string && type.size != width) {
    f.corrupt(o.path, a.type_begin, str_cat(label, ": variable-length element size ", type.size));
  }
  if (space.count > data_size / width) {
    f.corrupt(o.path, a.data_begin,
              str_cat(label, " holds ", space.count, " strings of ", width,
                      " bytes but its data has only ", data_size, " bytes"));
  }
  std::vector<std::string> out;
  out.reserve(space.count);
  Cursor c(f, o.path, "attribute data", a.data_begin, a.data_end);
  if (!vlen_string) {
    const int pad = type.bits & 0x0f;  // 0 NUL-terminated, 1 NUL-padded, 2 space-padded.
    for (uint64_t i = 0; i < space.count; ++i) {
      std::string_view s = c.bytes(width);
      s = s.substr(0, s.find('\0'));
      if (pad == 2) s = s.substr(0, s.find_last_not_of(' ') + 1);
      out.emplace_back(s);
    }
    return out;
  }
  // Each element: length, global heap collection address, object index. Several elements may
  // name one heap object, so the total is capped by the file size as well.
  std::map<uint64_t, Collection> collections;
  uint64_t total = 0;
  for (uint64_t i = 0; i < space.count; ++i) {
    const uint64_t at = c.pos();
    const uint64_t length = c.u32();
    const uint64_t collection_field = c.pos();
    const uint64_t collection = c.address();
    const uint32_t index = c.u32();
    if (length == 0) {
      out.emplace_back();
      continue;
    }
    auto it = collections.find(collection);
    if (it == collections.end()) {
      it = collections.emplace(collection, read_collection(f, o.path, collection, collection_field))
               .first;
    }
    auto object = it->second.find(index);
    if (object == it->second.end()) {
      f.corrupt(o.path, at, str_cat(label, ": global heap object ", index, " does not exist"));
    }
    const auto [begin, end] = object->second;
    if (length > end - begin) {
      f.corrupt(o.path, at,
                str_cat(label, ": string of ", length, " bytes in a heap object of ", end - begin));
    }
    total += length;
    if (total > f.size()) {
      f.corrupt(o.path, at, str_cat(label, " expands to more bytes than the file holds"));
    }
    out.emplace_back(f.bytes.data() + begin, length);
  }
  return out;
}

// The dataset at `path`: NotFound when there is none.
Object find_dataset(const File& f, std::string_view path) {
  std::optional<Object> o = resolve(f, path);
  if (!o || !o->find(kLayout)) throw NotFound(str_cat("no dataset ", where(f, path)));
  return std::move(*o);
}

const Message& required(const File& f, const Object& o, int type, std::string_view what) {
  const Message* m = o.find(type);
  if (m == nullptr) f.corrupt(o.path, o.address, str_cat("dataset has no ", what, " message"));
  return *m;
}

Shape shape_of(const File& f, const Object& o) {
  const Message& m = required(f, o, kDataspace, "dataspace");
  const Dataspace space = parse_dataspace(f, message_cursor(f, o, m, "dataspace message"));
  if (space.null || space.dims.size() > static_cast<size_t>(Shape::kMaxRank)) {
    throw InvalidArgument(
        str_cat("dataset ", where(f, o.path), " has unsupported rank ",
                space.null ? std::string("(null dataspace)") : std::to_string(space.dims.size())));
  }
  std::vector<int64_t> dims(space.dims.begin(), space.dims.end());
  return Shape(std::span<const int64_t>(dims));
}

template <class T>
void convert(const uint8_t* src, std::span<float> out) {
  for (size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));  // The host is little-endian, as the data.
    out[i] = static_cast<float>(v);
  }
}

// IV.A.2.l: the ids of the dataset's filters, in the order they were applied when writing.
std::vector<int> read_filters(const File& f, const Object& o, const std::string& label) {
  const Message* m = o.find(kFilterPipeline);
  if (m == nullptr) return {};
  Cursor c = message_cursor(f, o, *m, "filter pipeline message");
  const int version = c.u8();
  const int count = c.u8();
  if (version == 1) {
    c.skip(6);
  } else if (version != 2) {
    f.corrupt(o.path, m->begin, str_cat("filter pipeline version ", version, " is unknown"));
  }
  std::vector<int> ids;
  for (int i = 0; i < count; ++i) {
    const int id = c.u16();
    const uint64_t name_length = (version == 1 || id >= 256) ? c.u16() : 0;
    c.u16();  // Flags.
    const uint64_t values = c.u16();
    c.skip(version == 1 ? (name_length + 7) / 8 * 8 : name_length);
    c.skip(4 * values + (version == 1 && values % 2 == 1 ? 4 : 0));
    if (id != kDeflate && id != kShuffle) {
      throw Unimplemented(str_cat(label, " uses HDF5 filter ", id,
                                  ", which sluice's HDF5 reader does not support (it undoes "
                                  "deflate and shuffle)"));
    }
    ids.push_back(id);
  }
  return ids;
}

// Undoes the filters not masked off for this chunk, last applied first. The result has exactly
// `size` bytes.
std::string decode_chunk(const File& f, const Object& o, const std::string& label,
                         const std::vector<int>& filters, uint32_t mask, std::string_view stored,
                         uint64_t at, uint64_t size, uint32_t element_size) {
  std::string data(stored);
  for (size_t i = filters.size(); i-- > 0;) {
    if (i < 32 && (mask >> i) & 1) continue;
    if (filters[i] == kDeflate) {
      std::string out(size, '\0');
      z_stream z{};
      if (inflateInit(&z) != Z_OK) {
        throw ResourceExhausted(str_cat(label, ": zlib cannot start inflating"));
      }
      z.next_in = reinterpret_cast<Bytef*>(data.data());
      z.avail_in = static_cast<uInt>(std::min<size_t>(data.size(), UINT32_MAX));
      z.next_out = reinterpret_cast<Bytef*>(out.data());
      z.avail_out = static_cast<uInt>(size);
      const int status = inflate(&z, Z_FINISH);
      const uint64_t produced = z.total_out;
      inflateEnd(&z);
      if (status != Z_STREAM_END || produced != size) {
        f.corrupt(o.path, at,
                  str_cat(label, ": a deflated chunk does not inflate to ", size,
                          " bytes (zlib status ", status, ")"));
      }
      data = std::move(out);
    } else {  // kShuffle: byte k of every element was stored together.
      if (data.size() != size) {
        f.corrupt(
            o.path, at,
            str_cat(label, ": a shuffled chunk has ", data.size(), " bytes, expected ", size));
      }
      const uint64_t n = size / element_size;
      std::string out(data.size(), '\0');
      for (uint64_t b = 0; b < element_size; ++b) {
        for (uint64_t e = 0; e < n; ++e) out[e * element_size + b] = data[b * n + e];
      }
      std::copy(data.begin() + n * element_size, data.end(), out.begin() + n * element_size);
      data = std::move(out);
    }
  }
  if (data.size() < size) {
    f.corrupt(o.path, at, str_cat(label, ": a chunk holds ", data.size(), " bytes, needs ", size));
  }
  data.resize(size);
  return data;
}

// IV.A.2.i (layout version 3) and III.A.1: a chunked dataset indexed by a v1 B-tree of type 1.
// Every chunk offset must be a multiple of the chunk size inside the dataset, and the chunks
// together may not exceed the dataset's chunk grid, so the work is bounded by the dataset's size.
void read_chunks(const File& f, const Object& o, const std::string& label, Cursor& c,
                 const Shape& shape, uint32_t element_size, uint8_t* dst) {
  const int rank = shape.rank();
  const uint64_t rank_at = c.pos();
  const int dimensionality = c.u8();
  if (rank == 0 || dimensionality != rank + 1) {
    f.corrupt(o.path, rank_at,
              str_cat(label, ": chunk rank ", dimensionality - 1, " differs from rank ", rank));
  }
  const uint64_t tree_field = c.pos();
  const uint64_t tree = c.address();
  std::vector<uint64_t> chunk(rank);
  uint64_t chunk_elements = 1;
  uint64_t grid_elements = 1;  // The chunk grid covering the dataset.
  for (int i = 0; i < rank; ++i) {
    const uint64_t at = c.pos();
    chunk[i] = c.u32();
    if (chunk[i] == 0) f.corrupt(o.path, at, str_cat(label, ": chunk dimension 0"));
    chunk_elements *= chunk[i];  // At most 2^32 per factor, checked against the cap below.
    if (chunk_elements > kMaxChunkBytes) {
      throw Unimplemented(str_cat(label, " has chunks larger than ", kMaxChunkBytes,
                                  " bytes, which sluice's HDF5 reader does not support"));
    }
    const uint64_t dim = static_cast<uint64_t>(shape.dim(i));
    const uint64_t cover = (dim + chunk[i] - 1) / chunk[i] * chunk[i];
    constexpr uint64_t kCap = uint64_t{1} << 62;
    grid_elements = cover == 0 ? 0 : (grid_elements > kCap / cover ? kCap : grid_elements * cover);
  }
  const uint64_t element_at = c.pos();
  if (c.u32() != element_size) {
    f.corrupt(o.path, element_at, str_cat(label, ": chunk element size differs from the type's"));
  }
  const uint64_t chunk_bytes = chunk_elements * element_size;
  if (chunk_bytes > kMaxChunkBytes) {
    throw Unimplemented(str_cat(label, " has chunks larger than ", kMaxChunkBytes,
                                " bytes, which sluice's HDF5 reader does not support"));
  }
  const std::vector<int> filters = read_filters(f, o, label);
  if (tree == f.undefined()) return;  // No chunk written: the fill value, zero.

  std::vector<uint64_t> dims(shape.dims().begin(), shape.dims().end());
  std::vector<uint64_t> stride(rank, 1);  // Element strides of the dataset and of a chunk.
  std::vector<uint64_t> chunk_stride(rank, 1);
  for (int i = rank - 2; i >= 0; --i) {
    stride[i] = stride[i + 1] * dims[i + 1];
    chunk_stride[i] = chunk_stride[i + 1] * chunk[i + 1];
  }
  uint64_t total = 0;
  const uint64_t key_size = 8 + 8 * static_cast<uint64_t>(dimensionality);
  struct Pending {
    uint64_t address, field;
    int level;
  };
  std::vector<Pending> stack{{tree, tree_field, -1}};
  std::unordered_set<uint64_t> seen;
  while (!stack.empty()) {
    const Pending node = stack.back();
    stack.pop_back();
    if (!seen.insert(node.address).second) {
      f.corrupt(o.path, node.field,
                str_cat("chunk B-tree reaches node ", node.address, " twice (a cycle)"));
    }
    const uint64_t header = 8 + 2 * static_cast<uint64_t>(f.offset_size);
    const uint64_t start = f.locate(node.address, header, o.path, node.field, "B-tree node");
    Cursor n(f, o.path, "chunk B-tree node", start, f.size());
    n.signature("TREE");
    if (const int type = n.u8(); type != 1) {
      f.corrupt(o.path, start + 4, str_cat("chunk B-tree node has type ", type));
    }
    const int level = n.u8();
    if (node.level >= 0 && level != node.level) {
      f.corrupt(o.path, start + 5,
                str_cat("B-tree node has level ", level, ", expected ", node.level));
    }
    const uint64_t entries = n.u16();
    n.skip(2 * static_cast<uint64_t>(f.offset_size));
    n.need((entries + 1) * key_size + entries * f.offset_size);
    for (uint64_t e = 0; e < entries; ++e) {
      const uint64_t key_at = n.pos();
      const uint64_t stored_size = n.u32();
      const uint32_t mask = n.u32();
      std::vector<uint64_t> offset(dimensionality);
      for (uint64_t& v : offset) v = n.uint(8);
      const uint64_t child_field = n.pos();
      const uint64_t child = n.address();
      if (level > 0) {
        stack.push_back({child, child_field, level - 1});
        continue;
      }
      std::vector<uint64_t> extent(rank);
      for (int i = 0; i < rank; ++i) {
        if (offset[i] % chunk[i] != 0 || offset[i] >= dims[i]) {
          f.corrupt(o.path, key_at,
                    str_cat(label, ": chunk offset ", offset[i], " in dimension ", i,
                            " is not on the chunk grid"));
        }
        extent[i] = std::min(chunk[i], dims[i] - offset[i]);
      }
      total += chunk_elements;
      if (total > grid_elements) {
        f.corrupt(o.path, key_at, str_cat(label, ": more chunks than the dataset holds"));
      }
      const uint64_t stored_at = f.locate(child, stored_size, o.path, child_field, "chunk");
      const std::string data = decode_chunk(
          f, o, label, filters, mask, std::string_view(f.bytes.data() + stored_at, stored_size),
          stored_at, chunk_bytes, element_size);
      // Copy the part of the chunk inside the dataset, one run along the last dimension at a time.
      std::vector<uint64_t> index(rank, 0);
      while (true) {
        uint64_t from = 0;
        uint64_t to = 0;
        for (int i = 0; i < rank; ++i) {
          from += index[i] * chunk_stride[i];
          to += (offset[i] + index[i]) * stride[i];
        }
        std::memcpy(dst + to * element_size, data.data() + from * element_size,
                    extent[rank - 1] * element_size);
        int i = rank - 2;
        for (; i >= 0; --i) {
          if (++index[i] < extent[i]) break;
          index[i] = 0;
        }
        if (i < 0) break;
      }
    }
  }
}
}  // namespace

Hdf5Reader::Hdf5Reader(std::unique_ptr<const File> file) : file_(std::move(file)) {}
Hdf5Reader::~Hdf5Reader() = default;
Hdf5Reader::Hdf5Reader(Hdf5Reader&&) noexcept = default;
Hdf5Reader& Hdf5Reader::operator=(Hdf5Reader&&) noexcept = default;

const std::string& Hdf5Reader::path() const { return file_->path; }

Hdf5Reader Hdf5Reader::open(const std::string& path) {
  std::string bytes;
  try {
    bytes = read_file_bytes(path);
  } catch (const NotFound&) {
    throw NotFound(str_cat("HDF5 file ", path, " does not exist"));
  }
  return from_bytes(path, std::move(bytes));
}

// II: the superblock, searched at 0, 512, 1024, ... (a user block may precede it).
Hdf5Reader Hdf5Reader::from_bytes(std::string name, std::string bytes) {
  auto f = std::make_unique<File>();
  f->path = std::move(name);
  f->bytes = std::move(bytes);
  uint64_t sb = 0;
  while (sb + 8 <= f->size() && std::memcmp(f->data() + sb, kSignature, 8) != 0) {
    sb = sb == 0 ? 512 : sb * 2;
  }
  if (sb + 8 > f->size()) {
    throw DataLoss(str_cat(f->path, " is not an HDF5 file (no superblock signature)"));
  }
  Cursor c(*f, "superblock", "superblock", sb + 8, f->size());
  const int version = c.u8();
  if (version > 3) {
    throw Unimplemented(
        str_cat("HDF5 file ", f->path, ": superblock version ", version, " is not supported"));
  }
  auto sizes = [&](uint64_t at) {
    f->offset_size = c.u8();
    f->length_size = c.u8();
    for (int s : {f->offset_size, f->length_size}) {
      if (s != 2 && s != 4 && s != 8) {
        f->corrupt("superblock", at, str_cat("size of offsets or lengths is ", s));
      }
    }
  };
  uint64_t eof = 0;
  uint64_t eof_field = 0;
  if (version <= 1) {
    c.skip(4);  // Free-space, root symbol table entry and shared header versions, reserved.
    sizes(c.pos());
    c.skip(1 + 4 + 4);  // Reserved, group K values, consistency flags.
    if (version == 1) c.skip(4);
    f->base = c.address();
    c.address();  // Free-space info.
    eof_field = c.pos();
    eof = c.address();
    c.address();  // Driver info.
    c.address();  // Root symbol table entry: link name offset.
    f->root_field = c.pos();
    f->root = c.address();
  } else {
    sizes(c.pos());
    c.skip(1);  // Consistency flags.
    f->base = c.address();
    c.address();  // Superblock extension.
    eof_field = c.pos();
    eof = c.address();
    f->root_field = c.pos();
    f->root = c.address();
    const uint64_t end = c.pos();
    if (lookup3(f->data() + sb, end - sb) != c.u32()) {
      f->corrupt("superblock", end, "superblock checksum mismatch");
    }
  }
  if (f->base > f->size()) f->corrupt("superblock", sb, "base address lies past the end of file");
  if (eof != f->undefined() && eof > f->size() - f->base) {
    f->corrupt("superblock", eof_field,
               str_cat("file is truncated: the superblock says it ends at byte ", f->base + eof,
                       " but it has ", f->size(), " bytes"));
  }
  return Hdf5Reader(std::move(f));
}

bool Hdf5Reader::exists(std::string_view object_path) const {
  return resolve(*file_, object_path).has_value();
}

bool Hdf5Reader::is_group(std::string_view object_path) const {
  const std::optional<Object> o = resolve(*file_, object_path);
  return o && o->is_group();
}

std::vector<std::string> Hdf5Reader::list_group(std::string_view group_path) const {
  const std::optional<Object> o = resolve(*file_, group_path);
  if (!o || !o->is_group()) throw NotFound(str_cat("no group ", where(*file_, group_path)));
  std::vector<std::string> names;
  visit_members(*file_, *o, [&](const Member& m) {
    names.emplace_back(m.name);
    return false;
  });
  return names;
}

Shape Hdf5Reader::dataset_shape(std::string_view dataset_path) const {
  return shape_of(*file_, find_dataset(*file_, dataset_path));
}

void Hdf5Reader::read_float32(std::string_view dataset_path, std::span<float> out) const {
  const File& f = *file_;
  const Object o = find_dataset(f, dataset_path);
  const std::string label = str_cat("dataset ", where(f, o.path));
  const Shape shape = shape_of(f, o);
  if (static_cast<int64_t>(out.size()) != shape.num_elements()) {
    throw InvalidArgument(str_cat("read_float32 ", where(f, o.path), ": buffer of ", out.size(),
                                  " for shape ", shape.to_string()));
  }
  const Message& type_message = required(f, o, kDatatype, "datatype");
  if (type_message.flags & 0x02) {
    throw Unimplemented(str_cat(label,
                                " has a committed (shared) datatype, which sluice's HDF5 "
                                "reader does not support"));
  }
  const Datatype type = parse_datatype(message_cursor(f, o, type_message, "datatype message"));
  if (type.cls != 0 && type.cls != 1) throw InvalidArgument(str_cat(label, " is not numeric"));
  // Byte order is bit 0 (and bit 6 for VAX floats); bit 3 is the sign of fixed-point types.
  const bool little_endian = (type.bits & 0x41) == 0;
  const bool supported =
      little_endian &&
      (type.cls == 1 ? (type.size == 4 || type.size == 8)
                     : (type.size == 1 || type.size == 2 || type.size == 4 || type.size == 8));
  if (!supported) {
    throw Unimplemented(str_cat(label, " has a ", little_endian ? "" : "big-endian ",
                                type.cls == 1 ? "floating-point" : "integer", " type of ",
                                type.size, " bytes, which sluice's HDF5 reader does not support"));
  }

  // IV.A.2.i: data layout versions 3 and 4 (what libhdf5 1.8+ writes).
  const Message& layout = required(f, o, kLayout, "data layout");
  Cursor c = message_cursor(f, o, layout, "data layout message");
  const int version = c.u8();
  if (version < 3 || version > 4) {
    throw Unimplemented(str_cat(label, " has data layout version ", version,
                                ", which sluice's HDF5 reader does not support"));
  }
  const int layout_class = c.u8();
  if (out.size() > f.size() / type.size && layout_class <= 1) {
    f.corrupt(o.path, layout.begin,
              str_cat(label, " claims ", out.size(), " elements, more than the file holds"));
  }
  const uint64_t need = out.size() * static_cast<uint64_t>(type.size);
  const uint8_t* src = nullptr;
  std::vector<uint8_t> chunked;
  if (layout_class == 0) {  // Compact: the data is in the message.
    const uint64_t size = c.u16();
    if (size < need) {
      f.corrupt(o.path, c.pos(),
                str_cat(label, " holds ", size, " bytes of compact data, needs ", need));
    }
    src = f.data() + c.pos();
    c.skip(size);
  } else if (layout_class == 1) {  // Contiguous.
    const uint64_t field = c.pos();
    const uint64_t address = c.address();
    const uint64_t size = c.length();
    if (address == f.undefined()) {
      // Never written: libhdf5 reads the fill value, zero unless the file sets another.
      std::fill(out.begin(), out.end(), 0.0f);
      return;
    }
    if (size < need) {
      f.corrupt(o.path, field, str_cat(label, " stores ", size, " bytes of data, needs ", need));
    }
    src = f.data() + f.locate(address, need, o.path, field, "dataset data");
  } else if (layout_class == 2 && version == 3) {
    chunked.assign(need, 0);  // Chunks never written read as the fill value, zero.
    read_chunks(f, o, label, c, shape, type.size, chunked.data());
    src = chunked.data();
  } else if (layout_class == 2) {
    throw Unimplemented(str_cat(label,
                                " uses chunked storage with a version 4 chunk index, which "
                                "sluice's HDF5 reader does not support (save it contiguous, as "
                                "Keras does)"));
  } else {
    throw Unimplemented(str_cat(label, " uses storage layout class ", layout_class,
                                ", which sluice's HDF5 reader does not support"));
  }
  if (out.empty()) return;
  if (type.cls == 1) {
    if (type.size == 4) {
      std::memcpy(out.data(), src, need);
    } else {
      convert<double>(src, out);
    }
    return;
  }
  const bool is_signed = type.bits & 0x08;
  switch (type.size) {
    case 1:
      is_signed ? convert<int8_t>(src, out) : convert<uint8_t>(src, out);
      break;
    case 2:
      is_signed ? convert<int16_t>(src, out) : convert<uint16_t>(src, out);
      break;
    case 4:
      is_signed ? convert<int32_t>(src, out) : convert<uint32_t>(src, out);
      break;
    default:
      is_signed ? convert<int64_t>(src, out) : convert<uint64_t>(src, out);
      break;
  }
}

bool Hdf5Reader::has_attribute(std::string_view object_path, std::string_view name) const {
  const std::optional<Object> o = resolve(*file_, object_path);
  return o && find_attribute(*file_, *o, name).has_value();
}

std::vector<std::string> Hdf5Reader::read_string_list_attribute(std::string_view object_path,
                                                                std::string_view name) const {
  const std::optional<Object> o = resolve(*file_, object_path);
  std::optional<Attribute> a;
  if (o) a = find_attribute(*file_, *o, name);
  if (!a) {
    throw NotFound(str_cat("no attribute '", name, "' on ", where(*file_, object_path)));
  }
  return attribute_strings(*file_, *o, *a, name);
}

std::string Hdf5Reader::read_string_attribute(std::string_view object_path,
                                              std::string_view name) const {
  std::vector<std::string> values = read_string_list_attribute(object_path, name);
  if (values.size() != 1) {
    throw InvalidArgument(str_cat("attribute '", name, "' on ", where(*file_, object_path),
                                  " holds ", values.size(), " strings, expected one"));
  }
  return std::move(values.front());
}

}  // namespace sluice
