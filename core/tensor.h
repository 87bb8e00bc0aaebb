// Tensor: a typed, shaped, reference-counted view of a 64-byte-aligned buffer. Copies share the
// buffer (cheap, like TensorFlow's Tensor); slicing along the first dimension and reshaping never
// copy. A tensor made with a single numeric element keeps it inline and never allocates.
// String elements are std::string, or, for tensors made by from_string_views, views into one
// block of bytes allocated with them (no allocation per string; see strings()).
//
// Thread safety: a Tensor object is a value; distinct Tensor objects sharing one buffer may be
// used from different threads. Writing through data() while other threads read the same buffer
// is the caller's race, as with any shared memory.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/core/dtype.h"
#include "sluice/core/errors.h"
#include "sluice/core/shape.h"

namespace sluice {

namespace internal {

// The storage behind tensors: either owned (allocated with its elements, 64-byte aligned, in a
// block of core/memory_block.h), external (memory the caller owns, given back through a release
// callback) or packed strings.
class Buffer {
 public:
  static constexpr size_t kAlignment = 64;

  // Zeroed numbers (left unset unless `zeroed`) or empty strings. Large blocks come from and go
  // back to the buffer cache (core/buffer_cache.h).
  static Buffer* allocate(DType dtype, int64_t count, bool zeroed = true);
  static Buffer* external(void* data, size_t bytes, std::function<void()> release);
  // Packed strings: `count` std::string_views followed by `bytes` bytes for them to point into,
  // in one allocation. data() is the views, packed_bytes() the bytes; the caller fills both.
  static Buffer* allocate_packed_strings(int64_t count, size_t bytes);
  // Packed strings without bytes of their own: `count` views, for the caller to point into the
  // bytes of `owner`, a packed buffer, which this one keeps alive.
  static Buffer* allocate_string_views_into(int64_t count, Buffer* owner);

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  bool packed_strings() const { return packed_; }
  char* packed_bytes() const { return packed_bytes_; }
  // Whether [p, p + n) lies in the bytes a packed buffer's views point into (its own, or those of
  // the buffer it was made into).
  bool holds_packed_bytes(const char* p, size_t n) const;
  // A packed buffer's elements as std::strings, made once on first call (thread-safe: concurrent
  // first calls agree on one array). Later writes through it are what every reader then sees.
  std::string* materialized_strings();
  // The array materialized_strings() made, or null if none yet.
  const std::string* materialized_if_any() const {
    return materialized_.load(std::memory_order_acquire);
  }
  void ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy();
  }

 private:
  Buffer() = default;
  void destroy();

  std::atomic<int32_t> refs_{1};
  DType dtype_ = DType::kUInt8;
  bool packed_ = false;
  int64_t count_ = 0;
  size_t bytes_ = 0;
  void* data_ = nullptr;
  std::function<void()>* release_ = nullptr;  // Only for external buffers.
  char* packed_bytes_ = nullptr;              // Only for packed strings.
  Buffer* bytes_owner_ = nullptr;             // Packed views into another buffer's bytes.
  std::atomic<std::string*> materialized_{nullptr};
};

}  // namespace internal

// Read-only, indexable view of the elements of a string tensor (row-major), whatever their
// storage; it never copies or allocates. Valid while the tensor's buffer lives (a copy of the
// tensor keeps it alive).
class StringElements {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = std::string_view;

    iterator() = default;
    iterator(const std::string* strings, const std::string_view* views, int64_t i)
        : strings_(strings), views_(views), i_(i) {}
    std::string_view operator*() const {
      return strings_ != nullptr ? std::string_view(strings_[i_]) : views_[i_];
    }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++i_;
      return old;
    }
    difference_type operator-(const iterator& other) const { return i_ - other.i_; }
    bool operator==(const iterator& other) const { return i_ == other.i_; }

   private:
    const std::string* strings_ = nullptr;
    const std::string_view* views_ = nullptr;
    int64_t i_ = 0;
  };

  StringElements(const std::string* strings, const std::string_view* views, int64_t size)
      : strings_(strings), views_(views), size_(size) {}

  int64_t size() const { return size_; }
  std::string_view operator[](int64_t i) const {
    return strings_ != nullptr ? std::string_view(strings_[i]) : views_[i];
  }
  iterator begin() const { return {strings_, views_, 0}; }
  iterator end() const { return {strings_, views_, size_}; }

 private:
  const std::string* strings_;     // std::string storage (or a materialized packed buffer),
  const std::string_view* views_;  // else packed views.
  int64_t size_;
};

class Tensor {
 public:
  // A float32 scalar holding 0 (the members' defaults).
  Tensor() = default;
  // Zero-filled numbers, or empty strings.
  Tensor(DType dtype, Shape shape);
  // Numbers left unset, for code that then writes every element (strings are empty); saves
  // filling a large tensor twice.
  static Tensor uninitialized(DType dtype, Shape shape);

  // Copies share the buffer (or copy the inline value); moves take it. Inline here, as every
  // element of a pipeline is moved several times between its stages.
  Tensor(const Tensor& other)
      : shape_(other.shape_), dtype_(other.dtype_), buffer_(other.buffer_), offset_(other.offset_) {
    if (buffer_) buffer_->ref();
    std::memcpy(inline_, other.inline_, kInlineBytes);
  }
  Tensor(Tensor&& other) noexcept
      : shape_(other.shape_), dtype_(other.dtype_), buffer_(other.buffer_), offset_(other.offset_) {
    std::memcpy(inline_, other.inline_, kInlineBytes);
    other.buffer_ = nullptr;
  }
  Tensor& operator=(const Tensor& other) {
    if (this != &other) *this = Tensor(other);
    return *this;
  }
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) {
      release();
      shape_ = other.shape_;
      dtype_ = other.dtype_;
      buffer_ = other.buffer_;
      offset_ = other.offset_;
      std::memcpy(inline_, other.inline_, kInlineBytes);
      other.buffer_ = nullptr;
    }
    return *this;
  }
  ~Tensor() {
    if (buffer_) buffer_->unref();
  }

  template <class T>
  static Tensor scalar(T value) {
    if constexpr (std::is_trivially_copyable_v<T> && sizeof(T) <= kInlineBytes) {
      // A number is written straight into the inline bytes.
      Tensor t;
      t.dtype_ = kDTypeOf<T>;
      std::memcpy(t.inline_, &value, sizeof(T));
      return t;
    } else {
      Tensor t(kDTypeOf<T>, Shape{});
      *t.data<T>() = std::move(value);
      return t;
    }
  }
  static Tensor scalar(std::string_view value) { return scalar(std::string(value)); }
  static Tensor scalar(const char* value) { return scalar(std::string(value)); }

  // A tensor of `shape` holding `values` in row-major order (the shape defaults to [n]).
  template <class T>
  static Tensor from_vector(const std::vector<T>& values) {
    return from_vector(values, Shape{static_cast<int64_t>(values.size())});
  }
  template <class T>
  static Tensor from_vector(const std::vector<T>& values, Shape shape);
  static Tensor from_strings(const std::vector<std::string>& values) { return from_vector(values); }
  // A string tensor of `shape` (default [n]) holding copies of `values`, packed: all the bytes
  // and the element views in one allocation, however many strings there are. Reading through
  // strings() costs nothing more; data<std::string>() and item<std::string>() work too, making
  // std::string copies of all the elements once, on first use.
  static Tensor from_string_views(std::span<const std::string_view> values, Shape shape);
  static Tensor from_string_views(std::span<const std::string_view> values) {
    return from_string_views(values, Shape{static_cast<int64_t>(values.size())});
  }
  // As from_string_views, for `values` cut from the elements of `source` (views from
  // source.strings(), or parts of them: the fields of serialized records). When source is packed
  // and every value lies in its bytes, the tensor shares those bytes instead of copying them and
  // keeps them alive; packed bytes are never written after they are made, so the views stay true.
  // Otherwise the values are copied.
  static Tensor from_string_views_of(const Tensor& source, std::span<const std::string_view> values,
                                     Shape shape);

  // Wraps memory the caller owns without copying; `release` runs once no tensor refers to it.
  // REQUIRES: `dtype` is numeric and `data` holds shape.num_elements() values of it.
  static Tensor from_external(DType dtype, Shape shape, void* data, std::function<void()> release);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t dim(int i) const { return shape_.dim(i); }
  int64_t num_elements() const { return shape_.num_elements(); }
  // Bytes of the elements (for strings: sizeof(std::string) each, not their contents).
  size_t byte_size() const { return static_cast<size_t>(num_elements()) * dtype_size(dtype_); }

  // Typed access. Throws InvalidArgument when T does not match dtype().
  template <class T>
  T* data() {
    check_dtype(kDTypeOf<T>);
    return static_cast<T*>(raw_data());
  }
  template <class T>
  const T* data() const {
    check_dtype(kDTypeOf<T>);
    return static_cast<const T*>(raw_data());
  }
  template <class T>
  std::span<T> values() {
    return {data<T>(), static_cast<size_t>(num_elements())};
  }
  template <class T>
  std::span<const T> values() const {
    return {data<T>(), static_cast<size_t>(num_elements())};
  }
  // The elements of a string tensor as string_views, without copying (whatever the storage).
  // Throws InvalidArgument for other dtypes. The views see writes made through data<std::string>()
  // before strings() was called, not after.
  StringElements strings() const;
  // The single value of a one-element tensor. Throws InvalidArgument otherwise.
  template <class T>
  const T& item() const {
    check_single_element();
    return *data<T>();
  }

  // The first element. For strings: an array of std::string (see from_string_views).
  void* raw_data() {
    if (dtype_ == DType::kString) return string_data();
    return buffer_ ? static_cast<void*>(static_cast<char*>(buffer_->data()) + offset_) : inline_;
  }
  const void* raw_data() const {
    if (dtype_ == DType::kString) return string_data();
    return buffer_ ? static_cast<const void*>(static_cast<const char*>(buffer_->data()) + offset_)
                   : inline_;
  }

  // Eigen views over the elements (row-major), sharing memory with the tensor.
  template <class T>
  Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> flat() {
    return {data<T>(), num_elements()};
  }
  template <class T>
  Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> flat() const {
    return {data<T>(), num_elements()};
  }
  // Rank-2 tensors as a row-major matrix. Throws InvalidArgument for other ranks.
  template <class T>
  Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> matrix() {
    check_rank(2);
    return {data<T>(), dim(0), dim(1)};
  }
  template <class T>
  Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> matrix()
      const {
    check_rank(2);
    return {data<T>(), dim(0), dim(1)};
  }

  // Rows [begin, end) along the first dimension, sharing the buffer. Throws InvalidArgument for
  // a scalar or an out-of-range interval.
  Tensor slice(int64_t begin, int64_t end) const;
  // Row i without the first dimension (shape[1:]), sharing the buffer: t.select(i) is t[i].
  Tensor select(int64_t i) const;
  // The same elements under another shape with the same element count, sharing the buffer.
  Tensor reshape(Shape shape) const;
  // A deep copy with a buffer of its own.
  Tensor clone() const;

  bool shares_buffer_with(const Tensor& other) const {
    return buffer_ != nullptr && buffer_ == other.buffer_;
  }
  // Same dtype, shape and element values.
  bool equals(const Tensor& other) const;

  // "int64[2, 3] [[1, 2, 3], [4, 5, 6]]", eliding past `max_entries` elements.
  std::string debug_string(int64_t max_entries = 16) const;

 private:
  static constexpr size_t kInlineBytes = 8;
  bool fits_inline() const {
    return dtype_ != DType::kString && num_elements() == 1 && dtype_size(dtype_) <= kInlineBytes;
  }
  void check_dtype(DType expected) const {
    if (expected != dtype_) throw_dtype_mismatch(expected);
  }
  [[noreturn]] void throw_dtype_mismatch(DType expected) const;
  // The std::string elements, materializing a packed buffer's on first use.
  std::string* string_data() const;
  void check_single_element() const;
  void check_rank(int rank) const;
  void release() {
    if (buffer_) buffer_->unref();
    buffer_ = nullptr;
  }

  Shape shape_;
  DType dtype_ = DType::kFloat32;
  internal::Buffer* buffer_ = nullptr;  // Null when the value lives in inline_.
  size_t offset_ = 0;                   // Byte offset of the first element in buffer_.
  alignas(8) unsigned char inline_[kInlineBytes] = {};
};

std::ostream& operator<<(std::ostream& out, const Tensor& tensor);

template <class T>
Tensor Tensor::from_vector(const std::vector<T>& values, Shape shape) {
  if (shape.num_elements() != static_cast<int64_t>(values.size())) {
    throw InvalidArgument("from_vector: " + std::to_string(values.size()) +
                          " values do not fill shape " + shape.to_string());
  }
  Tensor t(kDTypeOf<T>, shape);
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

}  // namespace sluice
