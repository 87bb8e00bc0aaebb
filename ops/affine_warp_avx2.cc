// The affine warp kernels once more for AVX2 (this file alone is compiled with -mavx2): the
// compiler widens their loops to eight floats. Chosen at run time on CPUs that have it.
#include "sluice/ops/affine_warp.h"
#include "sluice/ops/affine_warp_kernels.h"

namespace sluice::internal {

const AffineWarpKernels* avx2_affine_warp_kernels() {
  static constexpr AffineWarpKernels kKernels{"avx2", warp_u8, warp_float, warp_u8_to_float,
                                              warp_float_to_float};
  return &kKernels;
}

}  // namespace sluice::internal
