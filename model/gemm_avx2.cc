// internal::gemm's kernels and the direct convolution's built with AVX2 and FMA (this file
// alone gets -mavx2 -mfma): Eigen picks its 8-float packets and fused multiply-adds at compile
// time, and so do the own kernels; the library's baseline (x86-64-v2) only allows 4-float SSE ones.
// gemm.cc calls these only on CPUs that have both. Eigen's namespace is renamed here so none of its
// templates compiled for AVX2 can stand in for the baseline ones elsewhere in the program.
#define Eigen sluice_eigen_avx2
#include "sluice/model/direct_conv_kernels.h"
#include "sluice/model/gemm_kernel.h"
#include "sluice/model/gemm_tiles.h"
#include "sluice/model/max_pool_kernels.h"

namespace sluice::internal {

void gemm_rows_avx2(bool transpose_a, bool transpose_b, int64_t r0, int64_t r1, int64_t m,
                    int64_t n, int64_t k, const float* a, const float* b, float* c,
                    bool accumulate) {
  eigen_gemm_rows(transpose_a, transpose_b, r0, r1, m, n, k, a, b, c, accumulate);
}

void tile_gemm_rows_avx2(bool transpose_a, int64_t r0, int64_t r1, int64_t m, int64_t n, int64_t k,
                         const float* a, const float* b, float* c, bool accumulate) {
  tile_gemm_rows(transpose_a, r0, r1, m, n, k, a, b, c, accumulate);
}

void direct_conv_forward_avx2(const DirectConv& g, const float* image, const float* padded_kernel,
                              float* scratch, float* out) {
  direct_conv::forward(g, image, padded_kernel, scratch, out);
}

void direct_conv_kernel_gradient_avx2(const DirectConv& g, const float* image, const float* dout,
                                      float* scratch, float* gradient) {
  direct_conv::kernel_gradient(g, image, dout, scratch, gradient);
}

void direct_conv_input_gradient_avx2(const DirectConv& g, const float* dout,
                                     const float* window_kernel, float* dx) {
  direct_conv::input_gradient(g, dout, window_kernel, dx);
}

void max_pool_avx2(const MaxPool& g, const float* image, float* out, int32_t* arg) {
  max_pool_kernel::image_max(g, image, out, arg);
}

}  // namespace sluice::internal
