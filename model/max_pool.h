// Max pooling's forward pass, one image at a time: compiled per instruction set like the GEMM and
// direct convolution kernels (max_pool_kernels.h) and chosen with them (gemm.cc), so
// force_gemm_kernel() chooses these too. Every build gives the same maxima and indices: a maximum
// is exact, and each build keeps the same first occurrence.
#pragma once

#include <cstdint>

#include "sluice/model/conv_utils.h"

namespace sluice::internal {

// The windows of a max pooling over images [input rows, input columns, channels].
struct MaxPool {
  WindowGeometry rows, columns;
  int64_t channels;
};

// out[rows.output, columns.output, channels] = each window's maximum over one image, and
// arg = the index within the image of its first occurrence in window order (rows, then columns).
// A NaN replaces any number, so that it propagates.
void max_pool(const MaxPool& g, const float* image, float* out, int32_t* arg);

}  // namespace sluice::internal
