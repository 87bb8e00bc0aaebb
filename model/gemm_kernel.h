// The Eigen product behind internal::gemm, as a function with internal linkage. Only gemm.cc,
// gemm_avx2.cc and gemm_avx512.cc include it: each compiles it for its own instruction set, and
// the last two rename Eigen's namespace first so that the builds' Eigen templates never merge at
// link time.
#pragma once

#include <Eigen/Core>
#include <cstdint>

namespace sluice::internal {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Strided = Eigen::Map<const RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
using MutableStrided = Eigen::Map<RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;

// Rows [r0, r1) of C = op(A) · op(B) (or C += ...), with the layouts gemm() documents.
void eigen_gemm_rows(bool transpose_a, bool transpose_b, int64_t r0, int64_t r1, int64_t m,
                     int64_t n, int64_t k, const float* a, const float* b, float* c,
                     bool accumulate) {
  const int64_t rows = r1 - r0;
  MutableStrided c_block(c + r0 * n, rows, n, Eigen::OuterStride<>(n));
  auto run = [&](const auto& op_a) {
    if (transpose_b) {
      const Strided b_map(b, n, k, Eigen::OuterStride<>(k));
      if (accumulate) {
        c_block.noalias() += op_a * b_map.transpose();
      } else {
        c_block.noalias() = op_a * b_map.transpose();
      }
    } else {
      const Strided b_map(b, k, n, Eigen::OuterStride<>(n));
      if (accumulate) {
        c_block.noalias() += op_a * b_map;
      } else {
        c_block.noalias() = op_a * b_map;
      }
    }
  };
  if (transpose_a) {
    // A is [k, m]: the rows r0..r1 of op(A) are columns r0..r1 of A.
    const Strided a_map(a + r0, k, rows, Eigen::OuterStride<>(m));
    run(a_map.transpose());
  } else {
    const Strided a_map(a + r0 * k, rows, k, Eigen::OuterStride<>(k));
    run(a_map);
  }
}

}  // namespace
}  // namespace sluice::internal
