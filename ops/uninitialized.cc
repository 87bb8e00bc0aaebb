#include "ops/uninitialized.h"

#include <cstdlib>

#include "core/errors.h"
#include "core/strings.h"

namespace sluice {

Tensor uninitialized_tensor(DType dtype, const Shape& shape) {
  const size_t bytes = static_cast<size_t>(shape.num_elements()) * dtype_size(dtype);
  // Small results live inline in the Tensor; nothing to save there.
  if (bytes <= 4096) return Tensor(dtype, shape);
  constexpr size_t kAlignment = internal::Buffer::kAlignment;
  void* data = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  if (data == nullptr) {
    throw ResourceExhausted(
        str_cat("cannot allocate ", bytes, " bytes for a ", dtype_name(dtype), shape, " tensor"));
  }
  return Tensor::from_external(dtype, shape, data, [data] { std::free(data); });
}

}  // namespace sluice
