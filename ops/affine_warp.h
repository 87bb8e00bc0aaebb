// The warp kernels behind ops/affine_transform.h: one image resampled through an affine map,
// built once for the baseline instruction set and once more for AVX2, and chosen at run time by
// the CPU's features. Both builds compute the same operations in the same order (no fused
// multiply-add), so their results are identical bit for bit: a pipeline's output does not depend
// on the machine it ran on.
#pragma once

#include <cstdint>

#include "sluice/ops/affine_transform.h"

namespace sluice::internal {

// Each warps one image [height, width, channels] through `matrix` (output pixel to input
// coordinates), filling what falls outside by `mode`.
struct AffineWarpKernels {
  const char* name;
  // Same dtype in and out: apply_affine_transform's. uint8 results are rounded to nearest.
  void (*warp_u8)(const uint8_t* src, int64_t height, int64_t width, int64_t channels,
                  const AffineMatrix& matrix, FillMode mode, uint8_t fill, uint8_t* dst);
  void (*warp_float)(const float* src, int64_t height, int64_t width, int64_t channels,
                     const AffineMatrix& matrix, FillMode mode, float fill, float* dst);
  // To float32 times `scale`, `cval` before the scale, laid out as `layout` says:
  // apply_affine_transform_to_float's.
  void (*warp_u8_to_float)(const uint8_t* src, int64_t height, int64_t width, int64_t channels,
                           const AffineMatrix& matrix, FillMode mode, float cval, float scale,
                           const FloatImageLayout& layout, float* dst);
  void (*warp_float_to_float)(const float* src, int64_t height, int64_t width, int64_t channels,
                              const AffineMatrix& matrix, FillMode mode, float cval, float scale,
                              const FloatImageLayout& layout, float* dst);
};

// The kernels of the baseline build, and of the AVX2 build (null where it is not built).
const AffineWarpKernels& baseline_affine_warp_kernels();
const AffineWarpKernels* avx2_affine_warp_kernels();

// The fastest kernels this CPU runs.
const AffineWarpKernels& affine_warp_kernels();

}  // namespace sluice::internal
