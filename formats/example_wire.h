// The protobuf wire format of tf.train.Feature and Features, shared by the Example parser
// (formats/example.h) and the SequenceExample parser (formats/sequence_example.h): a cursor over
// wire bytes, a Feature's kind and values, and the batch builder of a Features message. Internal.
//
// Thread safety: the functions are pure; a FeaturesParser is used by one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sluice/core/dtype.h"
#include "sluice/core/element.h"
#include "sluice/core/shape.h"
#include "sluice/core/strings.h"
#include "sluice/core/tensor.h"
#include "sluice/formats/example.h"

namespace sluice::example_wire {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// A cursor over protobuf wire data. Every method returns false on malformed input.
class WireReader {
 public:
  explicit WireReader(std::string_view data)
      : p_(reinterpret_cast<const uint8_t*>(data.data())), end_(p_ + data.size()) {}

  bool done() const { return p_ >= end_; }

  bool varint(uint64_t& value) {
    // Tags, lengths of short fields and small numbers are one byte.
    if (p_ < end_ && *p_ < 0x80) {
      value = *p_++;
      return true;
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && p_ < end_; shift += 7) {
      const uint8_t byte = *p_++;
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (byte < 0x80) {
        value = v;
        return true;
      }
    }
    return false;
  }

  bool tag(uint32_t& field, uint32_t& wire) {
    uint64_t v;
    if (!varint(v) || (v >> 3) == 0 || (v >> 3) > 0x1fffffff) return false;
    field = static_cast<uint32_t>(v >> 3);
    wire = static_cast<uint32_t>(v & 7);
    return true;
  }

  bool length_delimited(std::string_view& out) {
    uint64_t n;
    if (!varint(n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    out = std::string_view(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return true;
  }

  bool fixed32(uint32_t& out) {
    if (end_ - p_ < 4) return false;
    std::memcpy(&out, p_, 4);
    p_ += 4;
    return true;
  }

  bool skip(uint32_t wire) {
    uint64_t v;
    std::string_view s;
    switch (wire) {
      case kVarint:
        return varint(v);
      case kFixed64:
        if (end_ - p_ < 8) return false;
        p_ += 8;
        return true;
      case kLengthDelimited:
        return length_delimited(s);
      case kFixed32:
        if (end_ - p_ < 4) return false;
        p_ += 4;
        return true;
      default:
        return false;  // Groups do not occur in these proto3 messages.
    }
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// Calls on_entry(key, value) for each entry of a protobuf map<string, Message> (the message of
// its field `map_field`, e.g. Features.feature or FeatureLists.feature_list). A missing key or
// value is empty; other fields, at either level, are skipped. False on malformed input.
template <class OnEntry>
bool for_each_map_entry(std::string_view message, uint32_t map_field, OnEntry on_entry) {
  WireReader r(message);
  while (!r.done()) {
    uint32_t field, wire;
    if (!r.tag(field, wire)) return false;
    if (field != map_field || wire != kLengthDelimited) {
      if (!r.skip(wire)) return false;
      continue;
    }
    std::string_view entry;
    if (!r.length_delimited(entry)) return false;
    std::string_view key, value;
    WireReader er(entry);
    while (!er.done()) {
      if (!er.tag(field, wire)) return false;
      if (field == 1 && wire == kLengthDelimited) {
        if (!er.length_delimited(key)) return false;
      } else if (field == 2 && wire == kLengthDelimited) {
        if (!er.length_delimited(value)) return false;
      } else if (!er.skip(wire)) {
        return false;
      }
    }
    on_entry(key, value);
  }
  return true;
}

// Calls on_message(bytes) for every occurrence of the message field `number` of `message`
// (protobuf merges repeated occurrences of a singular message field; callers merge as it does).
template <class OnMessage>
bool for_each_message_field(std::string_view message, uint32_t number, OnMessage on_message) {
  WireReader r(message);
  while (!r.done()) {
    uint32_t field, wire;
    if (!r.tag(field, wire)) return false;
    if (field != number || wire != kLengthDelimited) {
      if (!r.skip(wire)) return false;
      continue;
    }
    std::string_view bytes;
    if (!r.length_delimited(bytes) || !on_message(bytes)) return false;
  }
  return true;
}

// The `oneof kind` of tensorflow.Feature, by field number.
enum class Kind { kNotSet = 0, kBytes = 1, kFloat = 2, kInt64 = 3 };

inline std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::kBytes:
      return "bytes_list";
    case Kind::kFloat:
      return "float_list";
    case Kind::kInt64:
      return "int64_list";
    case Kind::kNotSet:
      break;
  }
  return "no list (KIND_NOT_SET)";
}

inline Kind kind_of(DType dtype) {
  switch (dtype) {
    case DType::kString:
      return Kind::kBytes;
    case DType::kFloat32:
      return Kind::kFloat;
    case DType::kInt64:
      return Kind::kInt64;
    default:
      return Kind::kNotSet;
  }
}

struct FeatureView {
  Kind kind = Kind::kNotSet;
  std::string_view list;  // The serialized BytesList / FloatList / Int64List.
};

// A Feature message: the last of its oneof fields wins, as protobuf's merge rule says.
inline bool parse_feature(std::string_view bytes, FeatureView& out) {
  out = FeatureView{};
  WireReader r(bytes);
  while (!r.done()) {
    uint32_t field, wire;
    if (!r.tag(field, wire)) return false;
    if (field >= 1 && field <= 3 && wire == kLengthDelimited) {
      if (!r.length_delimited(out.list)) return false;
      out.kind = static_cast<Kind>(field);
    } else if (!r.skip(wire)) {
      return false;
    }
  }
  return true;
}

// Calls on_value(reader, wire_type) for every entry of field 1 (`value`) of a BytesList,
// FloatList or Int64List message, skipping any other field; on_value consumes the entry. False
// on malformed input or when on_value fails.
template <class OnValue>
bool for_each_value_entry(std::string_view list, OnValue on_value) {
  WireReader r(list);
  while (!r.done()) {
    uint32_t field, wire;
    if (!r.tag(field, wire)) return false;
    if (field != 1) {
      if (!r.skip(wire)) return false;
    } else if (!on_value(r, wire)) {
      return false;
    }
  }
  return true;
}

// The number of values in a list of `kind`, accepting packed and unpacked encodings.
inline bool count_values(Kind kind, std::string_view list, size_t& count) {
  count = 0;
  return for_each_value_entry(list, [&](WireReader& r, uint32_t wire) {
    if (kind == Kind::kBytes) {
      if (wire != kLengthDelimited || !r.skip(wire)) return false;
      ++count;
    } else if (wire == kLengthDelimited) {  // Packed.
      std::string_view packed;
      if (!r.length_delimited(packed)) return false;
      if (kind == Kind::kFloat) {
        if (packed.size() % 4 != 0) return false;
        count += packed.size() / 4;
      } else {
        // Each varint ends with the one byte that has its high bit clear.
        for (char c : packed) count += (static_cast<uint8_t>(c) & 0x80) == 0;
        if (!packed.empty() && (static_cast<uint8_t>(packed.back()) & 0x80)) return false;
      }
    } else if (kind == Kind::kFloat ? wire == kFixed32 : wire == kVarint) {  // Unpacked.
      if (!r.skip(wire)) return false;
      ++count;
    } else {
      return false;
    }
    return true;
  });
}

// Writes the values of a list (already counted, of the right kind) to out[0, count).
inline bool decode_values(std::string_view list, float* out) {
  return for_each_value_entry(list, [&](WireReader& r, uint32_t wire) {
    if (wire == kLengthDelimited) {
      std::string_view packed;
      if (!r.length_delimited(packed)) return false;
      std::memcpy(out, packed.data(), packed.size());  // Little-endian IEEE floats, as on disk.
      out += packed.size() / 4;
      return true;
    }
    uint32_t bits;
    if (!r.fixed32(bits)) return false;
    std::memcpy(out++, &bits, 4);
    return true;
  });
}

inline bool decode_values(std::string_view list, int64_t* out) {
  return for_each_value_entry(list, [&](WireReader& r, uint32_t wire) {
    uint64_t v;
    if (wire != kLengthDelimited) {
      if (!r.varint(v)) return false;
      *out++ = static_cast<int64_t>(v);
      return true;
    }
    std::string_view packed;
    if (!r.length_delimited(packed)) return false;
    WireReader values(packed);
    while (!values.done()) {
      if (!values.varint(v)) return false;
      *out++ = static_cast<int64_t>(v);  // Two's complement, not zigzag.
    }
    return true;
  });
}

// Bytes values are views into the serialized record; they are copied once, when the batch's
// string tensor is packed.
inline bool decode_values(std::string_view list, std::string_view* out) {
  return for_each_value_entry(list,
                              [&](WireReader& r, uint32_t) { return r.length_delimited(*out++); });
}

// Calls f((T*)nullptr) for the C++ type of an Example dtype (int64, float32, string).
template <class F>
decltype(auto) visit_value_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kInt64:
      return f(static_cast<int64_t*>(nullptr));
    case DType::kFloat32:
      return f(static_cast<float*>(nullptr));
    default:
      return f(static_cast<std::string_view*>(nullptr));
  }
}

// Fills out[0, count) from a default holding `count` values or one value.
template <class T>
void copy_default(const Tensor& d, int64_t count, T* out) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    const StringElements src = d.strings();  // The spec, and so the default, outlives the call.
    for (int64_t i = 0; i < count; ++i) out[i] = src[d.num_elements() == count ? i : 0];
  } else {
    const T* src = d.data<T>();
    if (d.num_elements() == count) {
      std::copy(src, src + count, out);
    } else {
      std::fill(out, out + count, src[0]);
    }
  }
}

// " in record 7" for messages; nothing when the record's index is unknown (-1), as for a
// parse_single_* call inside a map, whose stage names the element's file and record instead.
inline std::string in_record(int64_t record) {
  return record < 0 ? std::string() : str_cat(" in record ", record);
}

// How errors name the call and what it parses: "parse_example", "tf.train.Example", "key" (or
// "parse_sequence_example", "tf.train.SequenceExample", "context key").
struct ParseNames {
  std::string_view function;
  std::string_view message;
  std::string_view key;
};

inline constexpr ParseNames kExampleNames{"parse_example", "tf.train.Example", "key"};

// One feature of a FeatureSpec, checked and ready for parsing.
struct PreparedFeature {
  std::string_view key;
  bool fixed = false;
  DType dtype = DType::kFloat32;
  Shape shape;        // FixedLenFeature only.
  int64_t count = 0;  // Values per record, FixedLenFeature only.
  const Tensor* default_value = nullptr;
};

// The output being built for one feature over a batch. Strings are gathered as views into the
// serialized records (or the spec's defaults) and packed into one tensor buffer at the end: no
// allocation per record.
struct FeatureOutput {
  Tensor dense;                                 // FixedLenFeature of numbers: [B] + shape.
  std::vector<std::string_view> fixed_strings;  // FixedLenFeature of strings: B * count.
  std::vector<float> floats;                    // VarLenFeature values, by dtype.
  std::vector<int64_t> ints;
  std::vector<std::string_view> strings;
  std::vector<int64_t> row_lengths;
};

// Parses the Features message at field 1 of a batch of records (an Example's `features`, a
// SequenceExample's `context`) into the tensors of a FeatureSpec, as parse_example describes.
// The records must outlive finish().
class FeaturesParser {
 public:
  // Record b of the batch is record base + b in messages. `records`, when given, is the string
  // tensor the records are views of: string values then share its bytes where it allows (see
  // Tensor::from_string_views_of) rather than being copied. Throws InvalidArgument for a bad spec.
  FeaturesParser(const FeatureSpec& spec, size_t batch, int64_t base, ParseNames names,
                 const Tensor* records = nullptr);

  // Parses record b. Throws InvalidArgument naming the record (and key) on bad input.
  void add(size_t b, std::string_view serialized);
  // The tensors: batched ([B] + shape, values and row lengths), or single's unbatched ones.
  Element finish(bool single);

 private:
  [[noreturn]] void malformed(const PreparedFeature& f, int64_t record) const;
  void check_kind(const PreparedFeature& f, Kind kind, int64_t record) const;
  void add_fixed(const PreparedFeature& f, FeatureOutput& out, size_t b, bool present,
                 const FeatureView& view, int64_t record) const;
  void add_var_len(const PreparedFeature& f, FeatureOutput& out, bool present,
                   const FeatureView& view, int64_t record) const;

  // String values as a tensor of `shape`: sharing records_' bytes, or copied.
  Tensor strings_tensor(std::span<const std::string_view> values, Shape shape) const;
  // A VarLenFeature's values of all records, as one vector.
  Tensor var_len_values(DType dtype, FeatureOutput& out) const;

  ParseNames names_;
  std::vector<PreparedFeature> features_;
  std::vector<FeatureOutput> outputs_;
  std::vector<std::string_view> found_;
  std::vector<char> present_;
  size_t batch_;
  int64_t base_;
  const Tensor* records_;
};

}  // namespace sluice::example_wire
