// internal::gemm's kernel for a small inner dimension k and C overwritten (not accumulated):
// C = op(A) · B with B stored [k, n], written exactly once. Eigen zero-fills C and then reads it
// back through its kernel, three passes over C where the arithmetic (k multiply-adds per element)
// is cheap; here each tile of C is summed over k in registers and stored once, with streaming
// stores when C is much larger than the caches. Like gemm_kernel.h it has internal linkage and is
// compiled once per instruction set: by gemm.cc for the baseline (SSE, 4-float vectors) and by
// gemm_avx2.cc for AVX2 + FMA (8-float vectors). Without SSE2 (other architectures) it is not
// built and gemm() keeps Eigen's product.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <immintrin.h>
#define SLUICE_GEMM_SMALL_K 1
#else
#define SLUICE_GEMM_SMALL_K 0
#endif

namespace sluice::internal {
namespace {

// The largest k the kernel takes: the multiply-adds grow with k while C's traffic does not, and by
// k = 64 Dense's kernel-gradient product (bench/model_bench.cc, BM_GemmSmallK) gains only a few
// percent over Eigen's cache-blocked kernel.
constexpr int64_t kSmallKMax = 64;

#if SLUICE_GEMM_SMALL_K

namespace small_k {

#if defined(__AVX2__) && defined(__FMA__)
using Vec = __m256;
constexpr int64_t kLanes = 8;
inline Vec load(const float* p) { return _mm256_loadu_ps(p); }
inline Vec broadcast(float x) { return _mm256_set1_ps(x); }
inline Vec multiply_add(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
inline void stream(float* p, Vec v) { _mm256_stream_ps(p, v); }
#else
using Vec = __m128;
constexpr int64_t kLanes = 4;
inline Vec load(const float* p) { return _mm_loadu_ps(p); }
inline Vec broadcast(float x) { return _mm_set1_ps(x); }
inline Vec multiply_add(Vec a, Vec b, Vec c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
inline void store(float* p, Vec v) { _mm_storeu_ps(p, v); }
inline void stream(float* p, Vec v) { _mm_stream_ps(p, v); }
#endif

// A register tile of C is kRows rows by kCols columns: 12 vector accumulators, which leaves room
// in the 16 vector registers for the row of B and the broadcast element of A. Three rows by four
// vectors needs fewer loads per multiply-add than taller tiles, and measured fastest for both
// vector widths.
constexpr int64_t kRows = 3;
constexpr int64_t kVectors = 4;
constexpr int64_t kCols = kVectors * kLanes;
// Rows of C per block: op(A)'s rows for the block are packed as [k][kBlockRows] (16 KB at most),
// so both layouts of A feed the tiles the same way and A's rows stride through memory only once.
constexpr int64_t kBlockRows = 64;
// Columns of C per pass over a block: B's [k, columns] slice stays within 16 KB of L1.
constexpr int64_t kPanelBytes = 16 * 1024;
// Streaming stores bypass the caches: worth it only when C could not stay in the last-level cache
// until it is read (a convolution's output block, read back at once for the bias, stays cached).
constexpr int64_t kStreamBytes = 16 * 1024 * 1024;

// C[kTileRows, kTileVectors * kLanes] (row stride ldc) = A[kTileRows, k] · B[k, same columns],
// where A is packed [k][lda] and B has row stride ldb. Each element's sum runs over p = 0..k-1.
template <int64_t kTileRows, int64_t kTileVectors, bool kStream>
inline void tile(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                 int64_t ldc) {
  Vec acc[kTileRows][kTileVectors];
  for (int64_t r = 0; r < kTileRows; ++r) {
    for (int64_t v = 0; v < kTileVectors; ++v) acc[r][v] = broadcast(0.0f);
  }
  for (int64_t p = 0; p < k; ++p) {
    Vec row[kTileVectors];
    for (int64_t v = 0; v < kTileVectors; ++v) row[v] = load(b + p * ldb + v * kLanes);
    for (int64_t r = 0; r < kTileRows; ++r) {
      const Vec x = broadcast(a[p * lda + r]);
      for (int64_t v = 0; v < kTileVectors; ++v) acc[r][v] = multiply_add(x, row[v], acc[r][v]);
    }
  }
  for (int64_t r = 0; r < kTileRows; ++r) {
    for (int64_t v = 0; v < kTileVectors; ++v) {
      if constexpr (kStream) {
        stream(c + r * ldc + v * kLanes, acc[r][v]);
      } else {
        store(c + r * ldc + v * kLanes, acc[r][v]);
      }
    }
  }
}

// tile() for `rows` <= kTileRows rows and `vectors` <= kTileVectors vectors of columns.
template <bool kStream, int64_t kTileRows = kRows, int64_t kTileVectors = kVectors>
inline void tile_of(int64_t rows, int64_t vectors, int64_t k, const float* a, int64_t lda,
                    const float* b, int64_t ldb, float* c, int64_t ldc) {
  if constexpr (kTileRows > 1) {
    if (rows < kTileRows) {
      return tile_of<kStream, kTileRows - 1, kTileVectors>(rows, vectors, k, a, lda, b, ldb, c,
                                                           ldc);
    }
  }
  if constexpr (kTileVectors > 1) {
    if (vectors < kTileVectors) {
      return tile_of<kStream, kTileRows, kTileVectors - 1>(rows, vectors, k, a, lda, b, ldb, c,
                                                           ldc);
    }
  }
  tile<kTileRows, kTileVectors, kStream>(k, a, lda, b, ldb, c, ldc);
}

// Rows [r0, r1) of C, at most kBlockRows of them, in column panels.
template <bool kStream>
void block(bool transpose_a, int64_t r0, int64_t r1, int64_t m, int64_t n, int64_t k,
           const float* a, const float* b, float* c) {
  const int64_t rows = r1 - r0;
  alignas(64) float packed_a[kSmallKMax * kBlockRows];
  for (int64_t p = 0; p < k; ++p) {
    float* dst = packed_a + p * kBlockRows;
    if (transpose_a) {
      std::memcpy(dst, a + p * m + r0, static_cast<size_t>(rows) * sizeof(float));
    } else {
      for (int64_t i = 0; i < rows; ++i) dst[i] = a[(r0 + i) * k + p];
    }
  }
  // The columns past the last whole tile run on copies padded to whole vectors: their slice of B
  // with zeros, and a tile of C from which only the real columns are copied out.
  const int64_t full_cols = n - n % kCols;
  const int64_t tail_cols = n - full_cols;
  const int64_t tail_vectors = (tail_cols + kLanes - 1) / kLanes;
  alignas(64) float b_tail[kSmallKMax * kCols];
  for (int64_t p = 0; p < k && tail_cols > 0; ++p) {
    for (int64_t j = 0; j < kCols; ++j) {
      b_tail[p * kCols + j] = j < tail_cols ? b[p * n + full_cols + j] : 0.0f;
    }
  }
  const int64_t panel_cols =
      std::max(kCols, kPanelBytes / (k * int64_t{sizeof(float)}) / kCols * kCols);
  for (int64_t j0 = 0; j0 < full_cols; j0 += panel_cols) {
    const int64_t j1 = std::min(full_cols, j0 + panel_cols);
    for (int64_t i = 0; i < rows; i += kRows) {
      const int64_t tile_rows = std::min(kRows, rows - i);
      for (int64_t j = j0; j < j1; j += kCols) {
        tile_of<kStream>(tile_rows, kVectors, k, packed_a + i, kBlockRows, b + j, n,
                         c + (r0 + i) * n + j, n);
      }
    }
  }
  if (tail_cols > 0) {
    alignas(64) float c_tail[kRows * kCols];
    for (int64_t i = 0; i < rows; i += kRows) {
      const int64_t tile_rows = std::min(kRows, rows - i);
      tile_of<false>(tile_rows, tail_vectors, k, packed_a + i, kBlockRows, b_tail, kCols, c_tail,
                     kCols);
      for (int64_t r = 0; r < tile_rows; ++r) {
        std::memcpy(c + (r0 + i + r) * n + full_cols, c_tail + r * kCols,
                    static_cast<size_t>(tail_cols) * sizeof(float));
      }
    }
  }
}

}  // namespace small_k

// Rows [r0, r1) of C = op(A) · B with B stored [k, n] (not transposed), 1 <= k <= kSmallKMax.
// Never reads C. Each element's sum runs over k in order, whatever the row range.
void small_k_gemm_rows(bool transpose_a, int64_t r0, int64_t r1, int64_t m, int64_t n, int64_t k,
                       const float* a, const float* b, float* c) {
  using namespace small_k;
  // Streaming stores need every vector store aligned: C aligned and rows a whole number of vectors.
  const bool streamed = m * n * int64_t{sizeof(float)} >= kStreamBytes && n % kLanes == 0 &&
                        reinterpret_cast<uintptr_t>(c) % (kLanes * sizeof(float)) == 0;
  for (int64_t i = r0; i < r1; i += kBlockRows) {
    const int64_t i1 = std::min(r1, i + kBlockRows);
    if (streamed) {
      block<true>(transpose_a, i, i1, m, n, k, a, b, c);
    } else {
      block<false>(transpose_a, i, i1, m, n, k, a, b, c);
    }
  }
  // Streaming stores are weakly ordered: make them visible before this task reports completion.
  if (streamed) _mm_sfence();
}

#endif  // SLUICE_GEMM_SMALL_K

}  // namespace
}  // namespace sluice::internal
