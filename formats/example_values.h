// tf.train.Example and SequenceExample as plain C++ values: build an Example from feature lists
// and serialize it, or read any serialized one back (what `records show` prints and `records
// convert` writes). For the fast, spec-driven parsing of training input see formats/example.h.
//
// Thread safety: the functions are pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// One Feature: which of its three lists is set (kNone: none, which real files contain) and the
// values of that list.
struct FeatureValues {
  enum class Kind { kNone, kBytes, kFloat, kInt64 };
  Kind kind = Kind::kNone;
  std::vector<std::string> bytes;
  std::vector<float> floats;
  std::vector<int64_t> ints;

  static FeatureValues of_bytes(std::vector<std::string> v) {
    return {Kind::kBytes, std::move(v), {}, {}};
  }
  static FeatureValues of_floats(std::vector<float> v) {
    return {Kind::kFloat, {}, std::move(v), {}};
  }
  static FeatureValues of_ints(std::vector<int64_t> v) {
    return {Kind::kInt64, {}, {}, std::move(v)};
  }
};

// "bytes_list", "float_list", "int64_list" or "none".
std::string_view feature_kind_name(FeatureValues::Kind kind);

using ExampleValues = std::map<std::string, FeatureValues, std::less<>>;

struct SequenceExampleValues {
  ExampleValues context;
  std::map<std::string, std::vector<FeatureValues>, std::less<>> feature_lists;
};

// The wire bytes of a tf.train.Example holding `features`.
std::string serialize_example(const ExampleValues& features);

// Reads a serialized Example. Throws InvalidArgument naming `source` (e.g. "file.tfrecord record
// 7") when the bytes are not one.
ExampleValues parse_example_values(std::string_view serialized, std::string_view source);

// Reads a serialized SequenceExample (an Example reads as one with empty feature_lists). Throws
// InvalidArgument naming `source` when the bytes are not one.
SequenceExampleValues parse_sequence_example_values(std::string_view serialized,
                                                    std::string_view source);

}  // namespace sluice
