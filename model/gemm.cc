#include "model/gemm.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>

#include "model/gemm_kernel.h"

namespace sluice::internal {

#ifdef SLUICE_GEMM_AVX2
// model/gemm_avx2.cc: the same kernel compiled for AVX2 + FMA.
void gemm_rows_avx2(bool transpose_a, bool transpose_b, int64_t r0, int64_t r1, int64_t m,
                    int64_t n, int64_t k, const float* a, const float* b, float* c,
                    bool accumulate);
#endif

namespace {

using GemmRows = void (*)(bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, const float*,
                          const float*, float*, bool);

// The widest kernel this CPU runs, chosen once.
GemmRows select_kernel() {
#ifdef SLUICE_GEMM_AVX2
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return gemm_rows_avx2;
#endif
  return eigen_gemm_rows;
}

std::atomic<bool> force_baseline{false};

GemmRows kernel() {
  static const GemmRows selected = select_kernel();
  return force_baseline.load(std::memory_order_relaxed) ? eigen_gemm_rows : selected;
}

void gemm_rows(bool transpose_a, bool transpose_b, int64_t r0, int64_t r1, int64_t m, int64_t n,
               int64_t k, const float* a, const float* b, float* c, bool accumulate) {
  kernel()(transpose_a, transpose_b, r0, r1, m, n, k, a, b, c, accumulate);
}

}  // namespace

const char* gemm_kernel_name() { return kernel() == eigen_gemm_rows ? "baseline" : "avx2"; }

void force_baseline_gemm(bool force) { force_baseline.store(force, std::memory_order_relaxed); }

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
