// sluice.io: reading files and parsing tf.train.Example and SequenceExample records, as tf.io,
// run in C++.
#include <pybind11/stl.h>

#include "python/functions.h"
#include "sluice/core/strings.h"
#include "sluice/formats/example.h"
#include "sluice/formats/sequence_example.h"
#include "sluice/ops/image_codec.h"

namespace sluice::python {
namespace {

// A feature spec from {key: FixedLenFeature | VarLenFeature}.
FeatureSpec spec_arg(py::handle features, const char* function) {
  if (!PyDict_Check(required(features, function, "features").ptr())) {
    throw_type_error(function, "features", "a dict of FixedLenFeature / VarLenFeature", features);
  }
  FeatureSpec spec;
  for (auto [key, value] : py::reinterpret_borrow<py::dict>(features)) {
    const std::string name = str_arg(key, function, "features' keys");
    if (py::isinstance<FixedLenFeature>(value)) {
      spec.emplace(name, value.cast<FixedLenFeature>());
    } else if (py::isinstance<VarLenFeature>(value)) {
      spec.emplace(name, value.cast<VarLenFeature>());
    } else {
      throw_type_error(function, "features' values", "FixedLenFeature or VarLenFeature", value);
    }
  }
  return spec;
}

// A spec of feature lists from {key: FixedLenSequenceFeature | VarLenFeature}; None: none.
SequenceFeatureSpec sequence_spec_arg(py::handle features, const char* function) {
  SequenceFeatureSpec spec;
  if (features.is_none()) return spec;
  if (!PyDict_Check(features.ptr())) {
    throw_type_error(function, "sequence_features",
                     "a dict of FixedLenSequenceFeature / VarLenFeature", features);
  }
  for (auto [key, value] : py::reinterpret_borrow<py::dict>(features)) {
    const std::string name = str_arg(key, function, "sequence_features' keys");
    if (py::isinstance<FixedLenSequenceFeature>(value)) {
      spec.emplace(name, value.cast<FixedLenSequenceFeature>());
    } else if (py::isinstance<VarLenFeature>(value)) {
      spec.emplace(name, value.cast<VarLenFeature>());
    } else {
      throw_type_error(function, "sequence_features' values",
                       "FixedLenSequenceFeature or VarLenFeature", value);
    }
  }
  return spec;
}

// The context spec of a SequenceExample; None: none.
FeatureSpec context_spec_arg(py::handle features, const char* function) {
  if (features.is_none()) return {};
  if (!PyDict_Check(features.ptr())) {
    throw_type_error(function, "context_features", "a dict of FixedLenFeature / VarLenFeature",
                     features);
  }
  return spec_arg(features, function);
}

// A feature's default value as a tensor of its dtype (NumPy converts numbers).
Tensor default_arg(py::object value, DType dtype, const char* function) {
  if (dtype != DType::kString) {
    value = py::module_::import("numpy").attr("asarray")(value, std::string(dtype_name(dtype)));
  }
  return to_tensor(value, str_cat(function, ": default_value"));
}

// The records of a batch: a vector of strings.
std::vector<std::string_view> batch_of(const Tensor& serialized, std::string_view function) {
  if (serialized.dtype() != DType::kString || serialized.rank() != 1) {
    throw InvalidArgument(str_cat(function, ": serialized must be a vector of records, got ",
                                  dtype_name(serialized.dtype()), serialized.shape()));
  }
  const StringElements records = serialized.strings();
  return std::vector<std::string_view>(records.begin(), records.end());
}

// The one record of a parse_single_* call: a string scalar or a vector of one.
std::string_view single_of(const Tensor& serialized, std::string_view function) {
  if (serialized.dtype() != DType::kString || serialized.num_elements() != 1 ||
      serialized.rank() > 1) {
    throw InvalidArgument(str_cat(function, ": serialized must be one record, got ",
                                  dtype_name(serialized.dtype()), serialized.shape()));
  }
  return serialized.strings()[0];
}

// parse_sequence_example / parse_single_sequence_example: as a map op (no input) the parts as
// one element (context/k, feature_lists/k, feature_list_lengths/k: an element is flat); called
// on a value, TensorFlow's tuple of dicts.
py::object parse_sequence(py::object serialized, py::object context_features,
                          py::object sequence_features, bool single) {
  const char* function = single ? "parse_single_sequence_example()" : "parse_sequence_example()";
  const FeatureSpec context = context_spec_arg(context_features, function);
  const SequenceFeatureSpec lists = sequence_spec_arg(sequence_features, function);
  if (serialized.is_none()) {
    return py::cast(Op::of_element(
        single ? "parse_single_sequence_example" : "parse_sequence_example",
        [context, lists, single](const Tensor& t, const ElementContext&) {
          if (single) {
            return parse_single_sequence_example(single_of(t, "parse_single_sequence_example"),
                                                 context, lists)
                .as_element();
          }
          const std::vector<std::string_view> records = batch_of(t, "parse_sequence_example");
          return parse_sequence_example(std::span<const std::string_view>(records), context, lists)
              .as_element();
        }));
  }
  const Tensor t = to_tensor(serialized, str_cat(function, ": serialized"));
  if (single) {
    ParsedSingleSequenceExample out;
    {
      py::gil_scoped_release release;
      out = parse_single_sequence_example(single_of(t, "parse_single_sequence_example"), context,
                                          lists);
    }
    return py::make_tuple(to_python(out.context), to_python(out.feature_lists));
  }
  ParsedSequenceExamples out;
  {
    py::gil_scoped_release release;
    const std::vector<std::string_view> records = batch_of(t, "parse_sequence_example");
    out = parse_sequence_example(std::span<const std::string_view>(records), context, lists);
  }
  return py::make_tuple(to_python(out.context), to_python(out.feature_lists),
                        to_python(out.feature_list_lengths));
}

Element parse(const Tensor& serialized, const FeatureSpec& spec, bool single) {
  if (serialized.dtype() != DType::kString) {
    throw InvalidArgument(str_cat("parse_example: serialized must be strings, got ",
                                  dtype_name(serialized.dtype()), serialized.shape()));
  }
  const StringElements records = serialized.strings();
  if (single || serialized.rank() == 0) {
    if (serialized.num_elements() != 1) {
      throw InvalidArgument(
          str_cat("parse_single_example: serialized must be one record, got ", serialized.shape()));
    }
    return parse_single_example(records[0], spec);
  }
  if (serialized.rank() != 1) {
    throw InvalidArgument(
        str_cat("parse_example: serialized must be a vector of records, got ", serialized.shape()));
  }
  return parse_example(serialized, spec);
}

}  // namespace

void bind_io(py::module_& root) {
  py::module_ m = root.def_submodule("io", "tf.io's file and Example ops, run in C++");

  py::class_<FixedLenFeature>(m, "FixedLenFeature", R"doc(
A feature with a fixed number of values read into a dense tensor of `shape` (tf.io.FixedLenFeature);
dtype int64, float32 or string; default_value for records without it.)doc")
      .def(py::init([](py::object shape, py::object dtype, py::object default_value) {
             const char* f = "FixedLenFeature()";
             FixedLenFeature feature;
             std::vector<int64_t> dims;
             if (!py::isinstance<py::sequence>(shape) || PyUnicode_Check(shape.ptr())) {
               throw_type_error(f, "shape", "a sequence of ints", shape);
             }
             for (py::handle d : py::reinterpret_borrow<py::sequence>(shape)) {
               dims.push_back(int_arg(d, f, "shape"));
             }
             feature.shape = Shape(std::span<const int64_t>(dims));
             feature.dtype = to_dtype(dtype, "FixedLenFeature(): dtype");
             if (!default_value.is_none()) {
               py::object value = default_value;
               if (feature.dtype != DType::kString) {
                 value = py::module_::import("numpy").attr("asarray")(
                     default_value, std::string(dtype_name(feature.dtype)));
               }
               feature.default_value = to_tensor(value, "FixedLenFeature(): default_value");
             }
             return feature;
           }),
           py::arg("shape"), py::arg("dtype"), py::arg("default_value") = py::none());
  py::class_<VarLenFeature>(m, "VarLenFeature", R"doc(
A feature with any number of values (tf.io.VarLenFeature). parse_example gives its values of all
records concatenated under the key and their counts under key + '/row_lengths'.)doc")
      .def(py::init([](py::object dtype) {
             return VarLenFeature{to_dtype(dtype, "VarLenFeature(): dtype")};
           }),
           py::arg("dtype"));

  m.def(
      "parse_example",
      [](py::object serialized, py::object features) {
        const FeatureSpec spec = spec_arg(features, "parse_example()");
        return op_or_call(
            serialized,
            Op::of_element("parse_example", [spec](const Tensor& t, const ElementContext&) {
              return parse(t, spec, false);
            }));
      },
      py::arg("serialized") = py::none(), py::arg("features") = py::none(),
      "A vector of serialized tf.train.Example records -> a dict of batched features "
      "(tf.io.parse_example). As a map op it replaces the element with that dict.");
  m.def(
      "parse_single_example",
      [](py::object serialized, py::object features) {
        const FeatureSpec spec = spec_arg(features, "parse_single_example()");
        return op_or_call(
            serialized,
            Op::of_element("parse_single_example", [spec](const Tensor& t, const ElementContext&) {
              return parse(t, spec, true);
            }));
      },
      py::arg("serialized") = py::none(), py::arg("features") = py::none());
  py::class_<FixedLenSequenceFeature>(m, "FixedLenSequenceFeature", R"doc(
A feature list whose every step holds values of `shape` (tf.io.FixedLenSequenceFeature), read into
a [steps] + shape tensor; dtype int64, float32 or string. allow_missing: a record without the list
has no steps instead of being an error. default_value: one value padding the shorter records of a
batch (zero or "" when None).)doc")
      .def(py::init([](py::object shape, py::object dtype, py::object allow_missing,
                       py::object default_value) {
             const char* f = "FixedLenSequenceFeature()";
             FixedLenSequenceFeature feature;
             std::vector<int64_t> dims;
             if (!py::isinstance<py::sequence>(shape) || PyUnicode_Check(shape.ptr())) {
               throw_type_error(f, "shape", "a sequence of ints", shape);
             }
             for (py::handle d : py::reinterpret_borrow<py::sequence>(shape)) {
               dims.push_back(int_arg(d, f, "shape"));
             }
             feature.shape = Shape(std::span<const int64_t>(dims));
             feature.dtype = to_dtype(dtype, "FixedLenSequenceFeature(): dtype");
             feature.allow_missing = bool_arg(allow_missing, f, "allow_missing");
             if (!default_value.is_none()) {
               feature.default_value = default_arg(default_value, feature.dtype, f);
             }
             return feature;
           }),
           py::arg("shape"), py::arg("dtype"), py::arg("allow_missing") = false,
           py::arg("default_value") = py::none());
  m.def(
      "parse_sequence_example",
      [](py::object serialized, py::object context_features, py::object sequence_features) {
        return parse_sequence(serialized, context_features, sequence_features, false);
      },
      py::arg("serialized") = py::none(), py::arg("context_features") = py::none(),
      py::arg("sequence_features") = py::none(),
      "A vector of serialized tf.train.SequenceExample records -> (context, feature_lists, "
      "feature_list_lengths), three dicts of batched tensors (tf.io.parse_sequence_example). As a "
      "map op it replaces the element with one dict of them all, keyed 'context/k', "
      "'feature_lists/k' and 'feature_list_lengths/k'.");
  m.def(
      "parse_single_sequence_example",
      [](py::object serialized, py::object context_features, py::object sequence_features) {
        return parse_sequence(serialized, context_features, sequence_features, true);
      },
      py::arg("serialized") = py::none(), py::arg("context_features") = py::none(),
      py::arg("sequence_features") = py::none(),
      "One serialized tf.train.SequenceExample -> (context, feature_lists), two dicts of tensors "
      "(tf.io.parse_single_sequence_example). As a map op it replaces the element with one dict "
      "of both, keyed 'context/k' and 'feature_lists/k'.");
  m.def(
      "read_file",
      [](py::object filename) {
        return op_or_call(filename,
                          Op::of_tensor("read_file", [](const Tensor& t, const ElementContext&) {
                            return read_file(t);
                          }));
      },
      py::arg("filename") = py::none(), "A file's bytes as a string scalar (tf.io.read_file).");
}

}  // namespace sluice::python
