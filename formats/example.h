// Parsing tf.train.Example protos into tensors, as tf.io.parse_single_example / parse_example:
// a FeatureSpec names the features to extract and how. Knows protos, nothing of files. Parsing
// reads the protobuf wire format directly (no message objects, no allocation per feature or per
// record: a batch's string values are packed into one buffer per feature, see
// Tensor::from_string_views); the generated classes in formats/proto/example.pb.h are there for
// writing Examples.
//
// Thread safety: the functions are pure; a FeatureSpec is an immutable value once built.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "sluice/core/dtype.h"
#include "sluice/core/element.h"
#include "sluice/core/shape.h"
#include "sluice/core/tensor.h"

namespace sluice {

// A feature with a fixed number of values, shape.num_elements(), read into a dense tensor of
// `shape`. dtype is int64, float32 or string (tf.train's Int64List, FloatList, BytesList).
// `default_value` is used when the feature is absent, or present with no kind set (a Feature
// message with none of its lists: how YDF and TFX's CSV import write missing values); it holds
// shape.num_elements() values or one value to repeat. Without it such a record is an error.
struct FixedLenFeature {
  Shape shape;
  DType dtype = DType::kFloat32;
  std::optional<Tensor> default_value;
};

// A feature with any number of values (tf.io.VarLenFeature). Absent or kind-less: no values.
struct VarLenFeature {
  DType dtype = DType::kFloat32;
};

using FeatureConfig = std::variant<FixedLenFeature, VarLenFeature>;
// Feature key → how to read it. The output Element has one component per key, in key order (and,
// batched, a second one per VarLenFeature: see parse_example).
using FeatureSpec = std::map<std::string, FeatureConfig, std::less<>>;

// Parses one serialized tf.train.Example. FixedLenFeature → tensor of its shape; VarLenFeature →
// 1-D tensor of the values (TensorFlow gives a SparseTensor; its values are this tensor).
// Throws InvalidArgument naming the key and the record (`record_index`, for messages; -1: not
// known here, as inside a map over a TFRecordDataset, whose stage adds the element's file and
// record) when a required feature is missing, a feature's list has the wrong type, a
// FixedLenFeature the wrong number of values, or the bytes are not an Example; InvalidArgument
// also for a bad spec.
Element parse_single_example(std::string_view serialized, const FeatureSpec& spec,
                             int64_t record_index = -1);

// Parses a batch of serialized Examples (record i of the batch is record_index_base + i in
// messages). FixedLenFeature "k" → component "k" of shape [B] + shape. VarLenFeature "k" → two
// components: "k", the values of all records concatenated (1-D), and "k/row_lengths", int64 [B],
// the number of values of each record (a ragged tensor in row-lengths form; record i's values are
// the slice starting at the sum of the lengths before it). Errors as parse_single_example.
Element parse_example(std::span<const std::string> serialized, const FeatureSpec& spec,
                      int64_t record_index_base = 0);
Element parse_example(std::span<const std::string_view> serialized, const FeatureSpec& spec,
                      int64_t record_index_base = 0);
// As above, for a string vector of records as batch() gives them (packed): the string values of
// the result share the records' bytes instead of copying them, and keep them alive. Throws
// InvalidArgument unless `serialized` is a vector of strings.
Element parse_example(const Tensor& serialized, const FeatureSpec& spec,
                      int64_t record_index_base = 0);

// The suffix of the row-lengths component parse_example adds for a VarLenFeature.
inline constexpr std::string_view kRowLengthsSuffix = "/row_lengths";

}  // namespace sluice
