#include "model/gemm.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <Eigen/Core>

namespace sluice::internal {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Strided = Eigen::Map<const RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
using MutableStrided = Eigen::Map<RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;

// Rows [r0, r1) of C.
void gemm_rows(bool transpose_a, bool transpose_b, int64_t r0, int64_t r1, int64_t m, int64_t n,
               int64_t k, const float* a, const float* b, float* c, bool accumulate) {
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

void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a,
          const float* b, float* c, bool accumulate, bool parallel) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate) std::fill(c, c + m * n, 0.0f);
    return;
  }
  // Blocks of rows big enough to amortise GEMM packing; fixed so results never depend on threads.
  constexpr int64_t kRowBlock = 64;
  const double flops = 2.0 * double(m) * double(n) * double(k);
  if (!parallel || m < 2 * kRowBlock || flops < 4e6) {
    gemm_rows(transpose_a, transpose_b, 0, m, m, n, k, a, b, c, accumulate);
    return;
  }
  const int64_t blocks = (m + kRowBlock - 1) / kRowBlock;
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, blocks, 1), [&](const auto& range) {
    for (int64_t block = range.begin(); block != range.end(); ++block) {
      const int64_t r0 = block * kRowBlock;
      const int64_t r1 = std::min(m, r0 + kRowBlock);
      gemm_rows(transpose_a, transpose_b, r0, r1, m, n, k, a, b, c, accumulate);
    }
  });
}

}  // namespace sluice::internal
