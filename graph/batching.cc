#include "sluice/graph/batching.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "sluice/core/strings.h"

namespace sluice {
namespace {

// How a batching error names the element at `index` of the stage's input: by that index and,
// when known, where it was read.
std::string element_name(const Element& e, int64_t index) {
  if (!e.origin()) return str_cat("element ", index);
  return str_cat("element ", index, " (from ", e.origin().to_string(), ")");
}

// The batch's first element as tf.data names it, "First element", with its index when the batch
// is not the stream's first and where it was read when known.
std::string first_name(const Element& e, int64_t index) {
  if (!e.origin())
    return index == 0 ? "First element" : str_cat("First element (element ", index, ")");
  return str_cat("First element (element ", index, ", from ", e.origin().to_string(), ")");
}

const Element& element_of(const Element& element) { return element; }
const Element& element_of(const Item& item) { return item.element; }

// The padded shape of component c: the spec, completed with the batch's largest sizes.
template <class T>
Shape padded_shape(std::span<const T> batch, size_t c, const PaddingSpec& padding,
                   int64_t first_index) {
  const Shape& first = element_of(batch[0])[c].shape();
  std::vector<int64_t> dims(first.dims().begin(), first.dims().end());
  for (size_t i = 0; i < batch.size(); ++i) {
    const Shape& s = element_of(batch[i])[c].shape();
    if (s.rank() != first.rank()) {
      throw InvalidArgument(
          str_cat("Cannot pad tensors of different ranks in component ", c, ". ",
                  first_name(element_of(batch[0]), first_index), " had shape ", first, " and ",
                  element_name(element_of(batch[i]), first_index + static_cast<int64_t>(i)),
                  " had shape ", s, "."));
    }
    for (int d = 0; d < s.rank(); ++d) dims[d] = std::max(dims[d], s[d]);
  }
  if (c < padding.shapes.size() && !padding.shapes[c].empty()) {
    const auto& spec = padding.shapes[c];
    if (spec.size() != dims.size()) {
      throw InvalidArgument(str_cat("padded shape ", Shape(std::span<const int64_t>(dims)),
                                    " of component ", c, " has rank ", dims.size(),
                                    " but the padded_shapes entry has rank ", spec.size()));
    }
    for (size_t d = 0; d < spec.size(); ++d) {
      if (spec[d] < 0) continue;
      if (dims[d] > spec[d]) {
        throw InvalidArgument(str_cat(
            "Attempted to pad to a smaller size than the input element "
            "in component ",
            c, ": dimension ", d, " is ", dims[d], " but the padded shape allows ", spec[d], "."));
      }
      dims[d] = spec[d];
    }
  }
  return Shape(std::span<const int64_t>(dims));
}

// Copies `src` into the row of `dst` whose elements start at `dst_offset`, padding each dimension
// of src up to `row_shape` (the already-filled padding values stay where src does not reach).
void copy_padded(const Tensor& src, const Shape& row_shape, Tensor& dst, int64_t dst_offset) {
  const size_t elem = dtype_size(src.dtype());
  const int rank = src.rank();
  if (src.shape() == row_shape) {
    if (src.dtype() == DType::kString) {
      std::copy_n(src.data<std::string>(), src.num_elements(),
                  dst.data<std::string>() + dst_offset);
    } else {
      std::memcpy(static_cast<char*>(dst.raw_data()) + dst_offset * elem, src.raw_data(),
                  src.byte_size());
    }
    return;
  }
  // Copy innermost rows one at a time, walking the outer indices.
  const int64_t inner = rank == 0 ? 1 : src.dim(rank - 1);
  const int64_t rows = inner == 0 ? 0 : src.num_elements() / inner;
  std::vector<int64_t> index(static_cast<size_t>(std::max(rank - 1, 0)), 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (int d = 0; d < rank - 1; ++d) {
      int64_t stride = 1;
      for (int k = d + 1; k < rank; ++k) stride *= row_shape[k];
      offset += index[static_cast<size_t>(d)] * stride;
    }
    if (src.dtype() == DType::kString) {
      std::copy_n(src.data<std::string>() + r * inner, inner,
                  dst.data<std::string>() + dst_offset + offset);
    } else {
      std::memcpy(static_cast<char*>(dst.raw_data()) + (dst_offset + offset) * elem,
                  static_cast<const char*>(src.raw_data()) + r * inner * elem,
                  static_cast<size_t>(inner) * elem);
    }
    for (int d = rank - 2; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < src.dim(d)) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
}

void fill_padding(Tensor& batch, const PaddingSpec& padding, size_t c) {
  if (c >= padding.values.size()) return;  // Zeros / empty strings already.
  const Tensor& value = padding.values[c];
  if (value.dtype() != batch.dtype() || value.num_elements() != 1) {
    throw InvalidArgument(str_cat("padding value of component ", c, " must be a ",
                                  dtype_name(batch.dtype()), " scalar, got ",
                                  value.debug_string()));
  }
  visit_dtype(batch.dtype(), [&](auto zero) {
    using T = decltype(zero);
    std::fill_n(batch.data<T>(), batch.num_elements(), value.item<T>());
  });
}

// stack_elements over a span of elements, or of items read in place (batch_items: no element is
// moved out of its item first).
template <class T>
Element stack(std::span<const T> batch, int64_t first_index, const PaddingSpec* padding) {
  const Element& first = element_of(batch[0]);
  const size_t components = first.size();
  // Names batch[i] in an error.
  const auto nth = [&](size_t i) {
    return element_name(element_of(batch[i]), first_index + static_cast<int64_t>(i));
  };
  std::vector<Tensor> out;
  out.reserve(components);
  for (size_t i = 1; i < batch.size(); ++i) {
    if (element_of(batch[i]).size() != components) {
      throw InvalidArgument(str_cat("Cannot batch elements with different numbers of components. ",
                                    first_name(first, first_index), " had ", components, " and ",
                                    nth(i), " had ", element_of(batch[i]).size(), "."));
    }
  }
  const auto size = static_cast<int64_t>(batch.size());
  for (size_t c = 0; c < components; ++c) {
    const Tensor& head = first[c];
    for (size_t i = 1; i < batch.size(); ++i) {
      const Tensor& t = element_of(batch[i])[c];
      if (t.dtype() != head.dtype()) {
        throw InvalidArgument(str_cat("Cannot batch tensors with different dtypes in component ", c,
                                      ". ", first_name(first, first_index), " had dtype ",
                                      dtype_name(head.dtype()), " and ", nth(i), " had dtype ",
                                      dtype_name(t.dtype()), "."));
      }
      if (padding == nullptr && t.shape() != head.shape()) {
        throw InvalidArgument(str_cat("Cannot batch tensors with different shapes in component ", c,
                                      ". ", first_name(first, first_index), " had shape ",
                                      head.shape(), " and ", nth(i), " had shape ", t.shape(),
                                      "."));
      }
    }
    const Shape row = padding ? padded_shape(batch, c, *padding, first_index) : head.shape();
    if (padding == nullptr && head.dtype() == DType::kString) {
      // Packed: one allocation and one copy of the bytes for the whole batch, not one std::string
      // per value; ops that cut fields out of the values can then share them.
      std::vector<std::string_view> views;
      views.reserve(static_cast<size_t>(size * row.num_elements()));
      for (const T& e : batch) {
        const StringElements values = element_of(e)[c].strings();
        views.insert(views.end(), values.begin(), values.end());
      }
      out.push_back(Tensor::from_string_views(views, row.prepend(size)));
      continue;
    }
    // Without padding every row is copied in below, so a numeric batch starts unset.
    Tensor stacked = padding ? Tensor(head.dtype(), row.prepend(size))
                             : Tensor::uninitialized(head.dtype(), row.prepend(size));
    if (padding) fill_padding(stacked, *padding, c);
    const int64_t row_elements = row.num_elements();
    if (padding == nullptr) {
      // The common case: one memcpy per element.
      const size_t row_bytes = head.byte_size();
      auto* dst = static_cast<char*>(stacked.raw_data());
      for (const T& e : batch) {
        std::memcpy(dst, element_of(e)[c].raw_data(), row_bytes);
        dst += row_bytes;
      }
    } else {
      for (int64_t i = 0; i < size; ++i) {
        copy_padded(element_of(batch[static_cast<size_t>(i)])[c], row, stacked, i * row_elements);
      }
    }
    out.push_back(std::move(stacked));
  }
  return Element(std::move(out), first.names());
}

}  // namespace

Element stack_elements(std::span<const Element> elements, int64_t first_index,
                       const PaddingSpec* padding) {
  return stack(elements, first_index, padding);
}

Item batch_items(std::span<Item> items, int64_t first_index, const PaddingSpec* padding) {
  for (Item& item : items) {
    if (!item.ok()) return Item::failure(item.error);
  }
  try {
    return Item{stack(std::span<const Item>(items), first_index, padding), nullptr};
  } catch (...) {
    return Item::failure(std::current_exception());
  }
}

}  // namespace sluice
