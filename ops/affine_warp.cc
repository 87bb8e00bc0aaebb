// The affine warp kernels built for the baseline instruction set, and the choice among builds.
#include "sluice/ops/affine_warp.h"

#include "sluice/ops/affine_warp_kernels.h"

namespace sluice::internal {

const AffineWarpKernels& baseline_affine_warp_kernels() {
  static constexpr AffineWarpKernels kKernels{"baseline", warp_u8, warp_float, warp_u8_to_float,
                                              warp_float_to_float};
  return kKernels;
}

#ifndef SLUICE_AFFINE_WARP_AVX2
const AffineWarpKernels* avx2_affine_warp_kernels() { return nullptr; }
#endif

const AffineWarpKernels& affine_warp_kernels() {
  static const AffineWarpKernels& chosen = []() -> const AffineWarpKernels& {
    const AffineWarpKernels* avx2 = avx2_affine_warp_kernels();
    if (avx2 != nullptr) {
      __builtin_cpu_init();
      if (__builtin_cpu_supports("avx2")) return *avx2;
    }
    return baseline_affine_warp_kernels();
  }();
  return chosen;
}

}  // namespace sluice::internal
