// parse_example's wire parser: tf.train.Example read straight from protobuf wire bytes (no
// message objects), fixed-length and var-length features of every kind into batch tensors, with
// errors naming the record and feature. The wire helpers are in formats/example_wire.h, shared
// with the SequenceExample parser, whose context is a Features message like an Example's.
#include "sluice/formats/example.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/formats/example_wire.h"

namespace sluice {
namespace example_wire {
namespace {

std::vector<PreparedFeature> prepare(const FeatureSpec& spec, const ParseNames& names) {
  std::vector<PreparedFeature> out;
  out.reserve(spec.size());
  for (const auto& [key, config] : spec) {
    PreparedFeature f;
    f.key = key;
    if (const auto* fixed = std::get_if<FixedLenFeature>(&config)) {
      f.fixed = true;
      f.dtype = fixed->dtype;
      f.shape = fixed->shape;
      for (int64_t d : f.shape.dims()) {
        if (d < 0) {
          throw InvalidArgument(str_cat(names.function, ": FixedLenFeature '", key,
                                        "' needs a fully defined shape, not ", f.shape));
        }
      }
      f.count = f.shape.num_elements();
      if (fixed->default_value) {
        const Tensor& d = *fixed->default_value;
        if (d.dtype() != f.dtype || (d.num_elements() != f.count && d.num_elements() != 1)) {
          throw InvalidArgument(str_cat(names.function, ": the default of FixedLenFeature '", key,
                                        "' is ", dtype_name(d.dtype()), d.shape(), "; expected ",
                                        dtype_name(f.dtype), f.shape, " or a single value"));
        }
        f.default_value = &d;
      }
    } else {
      f.dtype = std::get<VarLenFeature>(config).dtype;
      if (spec.count(str_cat(key, kRowLengthsSuffix)) != 0) {
        throw InvalidArgument(str_cat(names.function, ": feature '", key, kRowLengthsSuffix,
                                      "' clashes with the row lengths of VarLenFeature '", key,
                                      "'"));
      }
    }
    if (kind_of(f.dtype) == Kind::kNotSet) {
      throw InvalidArgument(str_cat(names.function, ": feature '", key, "' has dtype ",
                                    dtype_name(f.dtype), "; ", names.message,
                                    " holds only int64, float32 and string"));
    }
    out.push_back(std::move(f));
  }
  return out;
}

// The index in `features` (sorted by key: they come from a std::map) of the one named `key`, or
// features.size(). A spec names a few features, and records hold a few more whose keys mostly
// differ in length: comparing lengths first skips most byte comparisons.
size_t find_feature(const std::vector<PreparedFeature>& features, std::string_view key) {
  constexpr size_t kLinearScanMax = 16;
  if (features.size() <= kLinearScanMax) {
    for (size_t i = 0; i < features.size(); ++i) {
      const std::string_view k = features[i].key;
      if (k.size() == key.size() && std::memcmp(k.data(), key.data(), key.size()) == 0) return i;
    }
    return features.size();
  }
  const auto it =
      std::lower_bound(features.begin(), features.end(), key,
                       [](const PreparedFeature& f, std::string_view k) { return f.key < k; });
  return it != features.end() && it->key == key ? static_cast<size_t>(it - features.begin())
                                                : features.size();
}

// Finds, for each spec feature, the serialized Feature in the Features message at field 1 of a
// record (features not in the spec are skipped without decoding). Duplicate keys and repeated
// Features fields merge as protobuf does: the last occurrence wins.
bool scan_features(std::string_view record, const std::vector<PreparedFeature>& features,
                   std::vector<std::string_view>& found, std::vector<char>& present) {
  std::fill(present.begin(), present.end(), 0);
  return for_each_message_field(record, 1, [&](std::string_view features_message) {
    return for_each_map_entry(features_message, 1,
                              [&](std::string_view key, std::string_view value) {
                                const size_t i = find_feature(features, key);
                                if (i < features.size()) {
                                  found[i] = value;
                                  present[i] = 1;
                                }
                              });
  });
}

// Where record b's values of a FixedLenFeature with `count` values per record go.
template <class T>
T* fixed_values(FeatureOutput& out, size_t b, int64_t count) {
  const size_t offset = b * static_cast<size_t>(count);
  if constexpr (std::is_same_v<T, std::string_view>) {
    return out.fixed_strings.data() + offset;
  } else {
    return out.dense.data<T>() + offset;
  }
}

template <class T>
std::vector<T>& values_of(FeatureOutput& out) {
  if constexpr (std::is_same_v<T, float>)
    return out.floats;
  else if constexpr (std::is_same_v<T, int64_t>)
    return out.ints;
  else
    return out.strings;
}

}  // namespace

FeaturesParser::FeaturesParser(const FeatureSpec& spec, size_t batch, int64_t base,
                               ParseNames names, const Tensor* records)
    : names_(names),
      features_(prepare(spec, names)),
      outputs_(features_.size()),
      found_(features_.size()),
      present_(features_.size()),
      batch_(batch),
      base_(base),
      records_(records) {
  for (size_t i = 0; i < features_.size(); ++i) {
    const PreparedFeature& f = features_[i];
    if (f.fixed && f.dtype == DType::kString) {
      outputs_[i].fixed_strings.resize(batch * static_cast<size_t>(f.count));
    } else if (f.fixed) {
      outputs_[i].dense = Tensor(f.dtype, f.shape.prepend(static_cast<int64_t>(batch)));
    } else {
      outputs_[i].row_lengths.reserve(batch);
    }
  }
}

void FeaturesParser::add(size_t b, std::string_view serialized) {
  const int64_t record = base_ + static_cast<int64_t>(b);
  if (!scan_features(serialized, features_, found_, present_)) {
    throw InvalidArgument(str_cat(
        names_.function, ": ", record < 0 ? std::string("the record") : str_cat("record ", record),
        " is not a valid ", names_.message, " (malformed wire data)"));
  }
  for (size_t i = 0; i < features_.size(); ++i) {
    const PreparedFeature& f = features_[i];
    FeatureView view;
    if (present_[i] && !parse_feature(found_[i], view)) malformed(f, record);
    if (f.fixed) {
      add_fixed(f, outputs_[i], b, present_[i] != 0, view, record);
    } else {
      add_var_len(f, outputs_[i], present_[i] != 0, view, record);
    }
  }
}

Element FeaturesParser::finish(bool single) {
  std::vector<Tensor> components;
  auto names = std::make_shared<Element::Names>();
  for (size_t i = 0; i < features_.size(); ++i) {
    const PreparedFeature& f = features_[i];
    FeatureOutput& out = outputs_[i];
    if (f.fixed && f.dtype == DType::kString) {
      components.push_back(strings_tensor(
          out.fixed_strings, single ? f.shape : f.shape.prepend(static_cast<int64_t>(batch_))));
      names->emplace_back(f.key);
      continue;
    }
    if (f.fixed) {
      components.push_back(single ? out.dense.reshape(f.shape) : out.dense);
      names->emplace_back(f.key);
      continue;
    }
    components.push_back(var_len_values(f.dtype, out));
    names->emplace_back(f.key);
    if (!single) {
      components.push_back(Tensor::from_vector(out.row_lengths));
      names->push_back(str_cat(f.key, kRowLengthsSuffix));
    }
  }
  return Element(std::move(components), std::move(names));
}

Tensor FeaturesParser::strings_tensor(std::span<const std::string_view> values, Shape shape) const {
  if (records_ != nullptr) return Tensor::from_string_views_of(*records_, values, shape);
  return Tensor::from_string_views(values, shape);
}

Tensor FeaturesParser::var_len_values(DType dtype, FeatureOutput& out) const {
  return visit_value_type(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const std::vector<T>& values = values_of<T>(out);
    if constexpr (std::is_same_v<T, std::string_view>) {
      return strings_tensor(values, Shape{static_cast<int64_t>(values.size())});
    } else {
      return Tensor::from_vector(values);
    }
  });
}

void FeaturesParser::malformed(const PreparedFeature& f, int64_t record) const {
  throw InvalidArgument(str_cat(names_.function, ": ", names_.key, " '", f.key, "'",
                                in_record(record), ": malformed Feature (bad wire data)"));
}

void FeaturesParser::check_kind(const PreparedFeature& f, Kind kind, int64_t record) const {
  if (kind != kind_of(f.dtype)) {
    throw InvalidArgument(str_cat(names_.function, ": ", names_.key, " '", f.key, "'",
                                  in_record(record), ": the feature holds a ", kind_name(kind),
                                  " but the spec asks for ", dtype_name(f.dtype)));
  }
}

void FeaturesParser::add_fixed(const PreparedFeature& f, FeatureOutput& out, size_t b, bool present,
                               const FeatureView& view, int64_t record) const {
  if (!present || view.kind == Kind::kNotSet) {
    if (f.default_value == nullptr) {
      if (f.count == 0) return;
      throw InvalidArgument(str_cat(
          names_.function, ": ", names_.key, " '", f.key, "'", in_record(record),
          present ? ": the feature has no values (KIND_NOT_SET) and the spec gives no default"
                  : ": feature is required (FixedLenFeature without default) but missing"));
    }
    visit_value_type(f.dtype, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      copy_default<T>(*f.default_value, f.count, fixed_values<T>(out, b, f.count));
    });
    return;
  }
  check_kind(f, view.kind, record);
  size_t n;
  if (!count_values(view.kind, view.list, n)) malformed(f, record);
  if (static_cast<int64_t>(n) != f.count) {
    throw InvalidArgument(str_cat(names_.function, ": ", names_.key, " '", f.key, "'",
                                  in_record(record), ": expected ", f.count, " ",
                                  dtype_name(f.dtype), " values for shape ", f.shape, ", got ", n));
  }
  bool ok = visit_value_type(f.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    return decode_values(view.list, fixed_values<T>(out, b, f.count));
  });
  if (!ok) malformed(f, record);
}

void FeaturesParser::add_var_len(const PreparedFeature& f, FeatureOutput& out, bool present,
                                 const FeatureView& view, int64_t record) const {
  if (!present || view.kind == Kind::kNotSet) {
    out.row_lengths.push_back(0);
    return;
  }
  check_kind(f, view.kind, record);
  size_t n;
  if (!count_values(view.kind, view.list, n)) malformed(f, record);
  bool ok = visit_value_type(f.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    std::vector<T>& values = values_of<T>(out);
    const size_t old = values.size();
    values.resize(old + n);
    return decode_values(view.list, values.data() + old);
  });
  if (!ok) malformed(f, record);
  out.row_lengths.push_back(static_cast<int64_t>(n));
}

}  // namespace example_wire

namespace {

template <class Records>
Element parse_batch(const Records& serialized, const FeatureSpec& spec, int64_t base,
                    const Tensor* records = nullptr) {
  example_wire::FeaturesParser parser(spec, static_cast<size_t>(serialized.size()), base,
                                      example_wire::kExampleNames, records);
  size_t b = 0;
  for (std::string_view record : serialized) parser.add(b++, record);
  return parser.finish(false);
}

}  // namespace

Element parse_single_example(std::string_view serialized, const FeatureSpec& spec,
                             int64_t record_index) {
  example_wire::FeaturesParser parser(spec, 1, record_index, example_wire::kExampleNames);
  parser.add(0, serialized);
  return parser.finish(true);
}

Element parse_example(std::span<const std::string> serialized, const FeatureSpec& spec,
                      int64_t record_index_base) {
  return parse_batch(serialized, spec, record_index_base);
}

Element parse_example(std::span<const std::string_view> serialized, const FeatureSpec& spec,
                      int64_t record_index_base) {
  return parse_batch(serialized, spec, record_index_base);
}

Element parse_example(const Tensor& serialized, const FeatureSpec& spec,
                      int64_t record_index_base) {
  if (serialized.dtype() != DType::kString || serialized.rank() != 1) {
    throw InvalidArgument(str_cat("parse_example: serialized must be a vector of strings, got ",
                                  dtype_name(serialized.dtype()), serialized.shape()));
  }
  return parse_batch(serialized.strings(), spec, record_index_base, &serialized);
}

}  // namespace sluice
