// internal::gemm's kernels and the direct convolution's built for AVX-512 (this file alone
// gets the x86-64-v4 extensions): Eigen's 16-float packets and the own kernels' 16-float vectors,
// twice the width of the AVX2 build. gemm.cc calls these only on CPUs that have AVX-512 F, VL, DQ
// and BW. Eigen's namespace is renamed as in gemm_avx2.cc, so none of these templates can stand in
// for another build's.
#define Eigen sluice_eigen_avx512
#include "sluice/model/direct_conv_kernels.h"
#include "sluice/model/gemm_kernel.h"
#include "sluice/model/gemm_tiles.h"
#include "sluice/model/max_pool_kernels.h"

namespace sluice::internal {

void gemm_rows_avx512(bool transpose_a, bool transpose_b, int64_t r0, int64_t r1, int64_t m,
                      int64_t n, int64_t k, const float* a, const float* b, float* c,
                      bool accumulate) {
  eigen_gemm_rows(transpose_a, transpose_b, r0, r1, m, n, k, a, b, c, accumulate);
}

void tile_gemm_rows_avx512(bool transpose_a, int64_t r0, int64_t r1, int64_t m, int64_t n,
                           int64_t k, const float* a, const float* b, float* c, bool accumulate) {
  tile_gemm_rows(transpose_a, r0, r1, m, n, k, a, b, c, accumulate);
}

void direct_conv_forward_avx512(const DirectConv& g, const float* image, const float* padded_kernel,
                                float* scratch, float* out) {
  direct_conv::forward(g, image, padded_kernel, scratch, out);
}

void direct_conv_kernel_gradient_avx512(const DirectConv& g, const float* image, const float* dout,
                                        float* scratch, float* gradient) {
  direct_conv::kernel_gradient(g, image, dout, scratch, gradient);
}

void direct_conv_input_gradient_avx512(const DirectConv& g, const float* dout,
                                       const float* window_kernel, float* dx) {
  direct_conv::input_gradient(g, dout, window_kernel, dx);
}

void max_pool_avx512(const MaxPool& g, const float* image, float* out, int32_t* arg) {
  max_pool_kernel::image_max(g, image, out, arg);
}

}  // namespace sluice::internal
