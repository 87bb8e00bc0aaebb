// uninitialized_tensor: a numeric tensor whose elements are left unset, for op results that write
// every element. Tensor(dtype, shape) zero-fills, which for a 224x224x3 float32 result is a
// 600 KB memset (and page faults) before the op overwrites all of it.
#pragma once

#include "core/dtype.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace sluice {

// REQUIRES: dtype is numeric, and the caller writes every element before anyone reads it.
Tensor uninitialized_tensor(DType dtype, const Shape& shape);

}  // namespace sluice
