// Row-major single-precision matrix products for the layers, on Eigen's GEMM through Eigen::Map
// (only gemm.cc and its builds for wider instruction sets compile Eigen's product kernels), or on a
// kernel of our own when the inner dimension is small or C is narrow (model/gemm_tiles.h). Large
// products are split into fixed blocks of rows of C run with oneTBB in the caller's task arena; the
// split does not depend on the thread count, so results are bitwise reproducible. On x86-64 CPUs
// with AVX2 and FMA, or AVX-512, the product runs on builds of the same kernels for those
// (model/gemm_avx2.cc, model/gemm_avx512.cc), chosen at run time, since the library's baseline
// instruction set (x86-64-v2) has 4-float SIMD only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::internal {

// C[m, n] = op(A) · op(B) (or C += ... when `accumulate`), where op(A) is [m, k]: A is stored
// [m, k], or [k, m] when `transpose_a`; B is stored [k, n], or [n, k] when `transpose_b`.
// `parallel` allows splitting over the rows of C (leave it false inside an already parallel loop).
void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a,
          const float* b, float* c, bool accumulate, bool parallel = false);

// The kernel gemm() runs: "avx512", "avx2" or "baseline".
const char* gemm_kernel_name();
// The kernels this CPU can run, narrowest first: "baseline", then "avx2" and "avx512" where the
// CPU has them.
std::vector<std::string> gemm_kernel_names();
// For tests and benchmarks: makes gemm(), the direct convolution (direct_conv.h) and max pooling
// (max_pool.h) run the named instruction set's kernels, one of gemm_kernel_names() ("" restores the
// automatic choice, the widest). Not meant to be called while products run.
void force_gemm_kernel(std::string_view name);
// For tests and benchmarks: makes gemm() run Eigen's product where it would take the register-tile
// kernel (false restores the automatic choice). Not meant to be called while products run.
void force_eigen_gemm(bool force);

}  // namespace sluice::internal
