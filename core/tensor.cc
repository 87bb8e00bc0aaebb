#include "sluice/core/tensor.h"

#include <cstdlib>
#include <memory>
#include <new>
#include <sstream>

#include "sluice/core/buffer_cache.h"
#include "sluice/core/memory_block.h"
#include "sluice/core/strings.h"

namespace sluice {
namespace internal {

namespace {
// The owned layout: the Buffer header, padded to one alignment unit, then the elements.
constexpr size_t kHeaderBytes = Buffer::kAlignment;
static_assert(sizeof(Buffer) <= kHeaderBytes);
// The blocks a buffer lives in are aligned to at least what its elements promise.
static_assert(kBlockAlignment % Buffer::kAlignment == 0);

// Whether an owned block of `block` bytes holding `dtype` comes from and goes back to the buffer
// cache (strings need their destructors run, so they never do).
bool cached(DType dtype, size_t block) {
  return dtype != DType::kString && block >= kCachedBlockMinBytes;
}
}  // namespace

Buffer* Buffer::allocate(DType dtype, int64_t count, bool zeroed) {
  const size_t bytes = static_cast<size_t>(count) * dtype_size(dtype);
  const size_t block = kHeaderBytes + bytes;
  void* memory = cached(dtype, block) ? take_cached_block(block) : nullptr;
  if (memory == nullptr) memory = allocate_block(block);
  auto* buffer = new (memory) Buffer();
  buffer->dtype_ = dtype;
  buffer->count_ = count;
  buffer->bytes_ = bytes;
  buffer->data_ = static_cast<char*>(memory) + kHeaderBytes;
  if (dtype == DType::kString) {
    auto* strings = static_cast<std::string*>(buffer->data_);
    for (int64_t i = 0; i < count; ++i) new (strings + i) std::string();
  } else if (zeroed) {
    std::memset(buffer->data_, 0, bytes);
  }
  return buffer;
}

Buffer* Buffer::allocate_packed_strings(int64_t count, size_t bytes) {
  const size_t views = static_cast<size_t>(count) * sizeof(std::string_view);
  void* memory = allocate_block(kHeaderBytes + views + bytes);
  auto* buffer = new (memory) Buffer();
  buffer->dtype_ = DType::kString;
  buffer->packed_ = true;
  buffer->count_ = count;
  buffer->bytes_ = views + bytes;
  buffer->data_ = static_cast<char*>(memory) + kHeaderBytes;
  buffer->packed_bytes_ = static_cast<char*>(buffer->data_) + views;
  auto* view = static_cast<std::string_view*>(buffer->data_);
  for (int64_t i = 0; i < count; ++i) new (view + i) std::string_view();
  return buffer;
}

Buffer* Buffer::allocate_string_views_into(int64_t count, Buffer* owner) {
  Buffer* buffer = allocate_packed_strings(count, 0);
  // Views of views point into the first owner's bytes: hold that one.
  Buffer* root = owner->bytes_owner_ != nullptr ? owner->bytes_owner_ : owner;
  root->ref();
  buffer->bytes_owner_ = root;
  return buffer;
}

bool Buffer::holds_packed_bytes(const char* p, size_t n) const {
  const Buffer* root = bytes_owner_ != nullptr ? bytes_owner_ : this;
  if (!root->packed_) return false;
  // As integers: comparing pointers into different objects is unspecified.
  const auto begin = reinterpret_cast<uintptr_t>(root->packed_bytes_);
  const auto end = reinterpret_cast<uintptr_t>(root->data_) + root->bytes_;
  const auto at = reinterpret_cast<uintptr_t>(p);
  return at >= begin && at <= end && n <= end - at;
}

std::string* Buffer::materialized_strings() {
  std::string* strings = materialized_.load(std::memory_order_acquire);
  if (strings != nullptr) return strings;
  auto fresh = std::make_unique<std::string[]>(static_cast<size_t>(count_));
  const auto* views = static_cast<const std::string_view*>(data_);
  for (int64_t i = 0; i < count_; ++i) fresh[i].assign(views[i]);
  // The first thread to publish wins; the others use its array and drop theirs.
  if (materialized_.compare_exchange_strong(strings, fresh.get(), std::memory_order_acq_rel,
                                            std::memory_order_acquire)) {
    return fresh.release();
  }
  return strings;
}

Buffer* Buffer::external(void* data, size_t bytes, std::function<void()> release) {
  void* memory = allocate_block(kHeaderBytes);
  auto* buffer = new (memory) Buffer();
  buffer->bytes_ = bytes;
  buffer->data_ = data;
  buffer->release_ = new std::function<void()>(std::move(release));
  return buffer;
}

void Buffer::destroy() {
  if (release_ != nullptr) {
    if (*release_) (*release_)();
    delete release_;
  } else if (packed_) {
    delete[] materialized_.load(std::memory_order_acquire);  // The views need no destruction.
    if (bytes_owner_ != nullptr) bytes_owner_->unref();
  } else if (dtype_ == DType::kString) {
    auto* strings = static_cast<std::string*>(data_);
    for (int64_t i = 0; i < count_; ++i) strings[i].~basic_string();
  }
  // An external buffer's block is its header alone.
  const size_t block = kHeaderBytes + (release_ != nullptr ? 0 : bytes_);
  const bool cacheable = release_ == nullptr && cached(dtype_, block);
  this->~Buffer();
  if (cacheable) {
    give_cached_block(static_cast<void*>(this), block);
  } else {
    free_block(static_cast<void*>(this), block);
  }
}

}  // namespace internal

Tensor::Tensor(DType dtype, Shape shape) : shape_(shape), dtype_(dtype) {
  if (!fits_inline()) buffer_ = internal::Buffer::allocate(dtype, shape.num_elements());
}

Tensor Tensor::uninitialized(DType dtype, Shape shape) {
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = dtype;
  if (!t.fits_inline()) {
    t.buffer_ = internal::Buffer::allocate(dtype, shape.num_elements(), /*zeroed=*/false);
  }
  return t;
}

Tensor Tensor::from_external(DType dtype, Shape shape, void* data, std::function<void()> release) {
  if (dtype == DType::kString) {
    throw InvalidArgument("from_external: string tensors cannot wrap external memory");
  }
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.buffer_ = internal::Buffer::external(data, t.byte_size(), std::move(release));
  return t;
}

Tensor Tensor::from_string_views(std::span<const std::string_view> values, Shape shape) {
  if (shape.num_elements() != static_cast<int64_t>(values.size())) {
    throw InvalidArgument(str_cat("from_string_views: ", values.size(),
                                  " values do not fill shape ", shape.to_string()));
  }
  size_t bytes = 0;
  for (std::string_view v : values) bytes += v.size();
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = DType::kString;
  t.buffer_ = internal::Buffer::allocate_packed_strings(static_cast<int64_t>(values.size()), bytes);
  auto* views = static_cast<std::string_view*>(t.buffer_->data());
  char* out = t.buffer_->packed_bytes();
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].empty()) std::memcpy(out, values[i].data(), values[i].size());
    views[i] = std::string_view(out, values[i].size());
    out += values[i].size();
  }
  return t;
}

Tensor Tensor::from_string_views_of(const Tensor& source, std::span<const std::string_view> values,
                                    Shape shape) {
  internal::Buffer* owner = source.buffer_;
  const bool shareable = source.dtype_ == DType::kString && owner != nullptr &&
                         owner->packed_strings() &&
                         shape.num_elements() == static_cast<int64_t>(values.size()) &&
                         std::all_of(values.begin(), values.end(), [&](std::string_view v) {
                           return v.empty() || owner->holds_packed_bytes(v.data(), v.size());
                         });
  if (!shareable) return from_string_views(values, shape);
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = DType::kString;
  t.buffer_ =
      internal::Buffer::allocate_string_views_into(static_cast<int64_t>(values.size()), owner);
  std::copy(values.begin(), values.end(), static_cast<std::string_view*>(t.buffer_->data()));
  return t;
}

std::string* Tensor::string_data() const {
  // offset_ counts sizeof(std::string) bytes per element for either storage (see byte_size()).
  const size_t index = offset_ / sizeof(std::string);
  if (buffer_->packed_strings()) return buffer_->materialized_strings() + index;
  return static_cast<std::string*>(buffer_->data()) + index;
}

StringElements Tensor::strings() const {
  check_dtype(DType::kString);
  const size_t index = offset_ / sizeof(std::string);
  if (buffer_->packed_strings()) {
    if (const std::string* s = buffer_->materialized_if_any()) {
      return {s + index, nullptr, num_elements()};
    }
    return {nullptr, static_cast<const std::string_view*>(buffer_->data()) + index, num_elements()};
  }
  return {static_cast<const std::string*>(buffer_->data()) + index, nullptr, num_elements()};
}

void Tensor::throw_dtype_mismatch(DType expected) const {
  throw InvalidArgument(
      str_cat("tensor has dtype ", dtype_name(dtype_), ", accessed as ", dtype_name(expected)));
}

void Tensor::check_single_element() const {
  if (num_elements() != 1) {
    throw InvalidArgument(
        str_cat("item() needs a tensor of one element, this one has shape ", shape_.to_string()));
  }
}

void Tensor::check_rank(int rank) const {
  if (shape_.rank() != rank) {
    throw InvalidArgument(
        str_cat("expected a tensor of rank ", rank, ", got shape ", shape_.to_string()));
  }
}

Tensor Tensor::slice(int64_t begin, int64_t end) const {
  if (rank() == 0) throw InvalidArgument("cannot slice a scalar tensor");
  if (begin < 0 || end < begin || end > dim(0)) {
    throw InvalidArgument(
        str_cat("slice [", begin, ", ", end, ") is out of range for shape ", shape_.to_string()));
  }
  Shape shape = shape_;
  shape.set_dim(0, end - begin);
  const size_t row_bytes = dim(0) == 0 ? 0 : byte_size() / static_cast<size_t>(dim(0));
  Tensor out;
  out.shape_ = shape;
  out.dtype_ = dtype_;
  if (buffer_ == nullptr) {
    // An inline tensor has at most one element: the slice is it or nothing.
    if (out.fits_inline())
      std::memcpy(out.inline_, inline_, kInlineBytes);
    else
      out.buffer_ = internal::Buffer::allocate(dtype_, 0);
    return out;
  }
  out.buffer_ = buffer_;
  buffer_->ref();
  out.offset_ = offset_ + static_cast<size_t>(begin) * row_bytes;
  return out;
}

Tensor Tensor::select(int64_t i) const {
  if (rank() == 0) throw InvalidArgument("cannot index a scalar tensor");
  if (i < 0 || i >= dim(0)) {
    throw InvalidArgument(str_cat("index ", i, " is out of range for shape ", shape_.to_string()));
  }
  return slice(i, i + 1).reshape(shape_.drop_first());
}

Tensor Tensor::reshape(Shape shape) const {
  if (shape.num_elements() != num_elements()) {
    throw InvalidArgument(str_cat("cannot reshape a tensor of shape ", shape_.to_string(), " (",
                                  num_elements(), " elements) to ", shape.to_string()));
  }
  Tensor out(*this);
  out.shape_ = shape;
  return out;
}

Tensor Tensor::clone() const {
  if (dtype_ == DType::kString && buffer_->packed_strings()) {
    const StringElements elements = strings();
    const std::vector<std::string_view> views(elements.begin(), elements.end());
    return from_string_views(views, shape_);
  }
  if (dtype_ == DType::kString) {
    Tensor out(dtype_, shape_);
    std::copy_n(data<std::string>(), num_elements(), out.data<std::string>());
    return out;
  }
  Tensor out = uninitialized(dtype_, shape_);
  std::memcpy(out.raw_data(), raw_data(), byte_size());
  return out;
}

bool Tensor::equals(const Tensor& other) const {
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  if (dtype_ == DType::kString) {
    const StringElements a = strings();
    const StringElements b = other.strings();
    for (int64_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }
  return std::memcmp(raw_data(), other.raw_data(), byte_size()) == 0;
}

namespace {

template <class T>
void write_value(std::ostream& out, const T& value) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    out << '"' << value << '"';
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    out << static_cast<int>(value);
  } else if constexpr (std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>) {
    out << static_cast<float>(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    out << (value ? "true" : "false");
  } else {
    out << value;
  }
}

// Writes the elements nested by dimension: [[1, 2], [3, 4]]. `values` is indexable by the
// row-major element index.
template <class Values>
void write_nested(std::ostream& out, const Values& values, int64_t first, const Shape& shape,
                  int axis, int64_t& written, int64_t max_entries) {
  if (axis == shape.rank()) {
    write_value(out, values[first]);
    ++written;
    return;
  }
  int64_t stride = 1;
  for (int i = axis + 1; i < shape.rank(); ++i) stride *= shape[i];
  out << '[';
  for (int64_t i = 0; i < shape[axis]; ++i) {
    if (i > 0) out << ", ";
    if (written >= max_entries) {
      out << "...";
      break;
    }
    write_nested(out, values, first + i * stride, shape, axis + 1, written, max_entries);
  }
  out << ']';
}

}  // namespace

std::string Tensor::debug_string(int64_t max_entries) const {
  std::ostringstream out;
  out << dtype_name(dtype_) << shape_.to_string() << ' ';
  int64_t written = 0;
  if (dtype_ == DType::kString) {
    write_nested(out, strings(), 0, shape_, 0, written, max_entries);
  } else {
    visit_dtype(dtype_, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (!std::is_same_v<T, std::string>) {
        write_nested(out, data<T>(), 0, shape_, 0, written, max_entries);
      }
    });
  }
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const Tensor& tensor) {
  return out << tensor.debug_string();
}

}  // namespace sluice
