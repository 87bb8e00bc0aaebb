// Row-major single-precision matrix products for the layers, on Eigen's GEMM through Eigen::Map
// (kept in one translation unit so Eigen's product kernels are compiled once). Large products are
// split into fixed blocks of rows of C run with oneTBB in the caller's task arena; the split does
// not depend on the thread count, so results are bitwise reproducible.
#pragma once

#include <cstdint>

namespace sluice::internal {

// C[m, n] = op(A) · op(B) (or C += ... when `accumulate`), where op(A) is [m, k]: A is stored
// [m, k], or [k, m] when `transpose_a`; B is stored [k, n], or [n, k] when `transpose_b`.
// `parallel` allows splitting over the rows of C (leave it false inside an already parallel loop).
void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a,
          const float* b, float* c, bool accumulate, bool parallel = false);

}  // namespace sluice::internal
