// internal::gemm's own kernel, for products Eigen's cache-blocked one serves badly: a small inner
// dimension k (C is then as cheap to compute as to write: Eigen zero-fills C and reads it back
// through its kernel, three passes where the arithmetic is k multiply-adds per element), or a
// narrow C of at most kNarrowMax columns (a convolution's filters: Eigen packs both operands on
// every call and pads its 4-column panels). It computes C = op(A) · B, or C += op(A) · B, with B
// stored [k, n]: each tile of C is summed over k in registers and stored once per chunk of k, with
// streaming stores when an overwritten C is much larger than the caches.
//
// Like gemm_kernel.h it has internal linkage and is compiled once per instruction set: by gemm.cc
// for the baseline (SSE, 4-float vectors), by gemm_avx2.cc for AVX2 + FMA (8-float vectors) and by
// gemm_avx512.cc for AVX-512 (16-float vectors), on simd.h's vectors. Without SSE2 (other
// architectures) it is not built and gemm() keeps Eigen's product.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "sluice/model/simd.h"

namespace sluice::internal {
namespace {

// The largest k taken whatever C's width: the multiply-adds grow with k while C's traffic does not,
// and by k = 64 Dense's kernel-gradient product (bench/model_bench.cc, BM_GemmSmallK) gains only a
// few percent over Eigen's cache-blocked kernel. It is also the chunk of k that one pass over
// packed rows of A sums.
constexpr int64_t kSmallKMax = 64;
// The widest C taken whatever k: two AVX-512 vectors, or a convolution of up to 32 filters. On
// the fashion-cnn's convolutions this kernel ran 1.3-2.9x as fast as Eigen's (AVX-512).
constexpr int64_t kNarrowMax = 32;

#if SLUICE_SIMD

namespace tiles {

using namespace simd;

// A register tile of C is kRows rows by kVectors vectors: 12 accumulators, which leaves room in 16
// vector registers for the row of B and the broadcast element of A. Three rows by four vectors
// needs fewer loads per multiply-add than taller tiles, and measured fastest for both widths; the
// columns left past the last whole tile take tiles as tall as keep 12 accumulators.
constexpr int64_t kRows = 3;
constexpr int64_t kVectors = 4;
constexpr int64_t kCols = kVectors * kLanes;
constexpr int64_t kAccumulators = kRows * kVectors;
// Rows of C per block where A is packed: what one pass over a chunk of k covers (see block()).
constexpr int64_t kBlockRows = 64;
// Columns of C per pass over a block: B's [k, columns] slice stays within 16 KB of L1.
constexpr int64_t kPanelBytes = 16 * 1024;
// Streaming stores bypass the caches: worth it only when C could not stay in the last-level cache
// until it is read (a convolution's output block, read back at once for the bias, stays cached).
constexpr int64_t kStreamBytes = 16 * 1024 * 1024;

// How a tile leaves C: overwritten, overwritten with streaming stores, or added to.
enum class Store { kOverwrite, kStream, kAdd };

// How the tiles find op(A)'s element (row r, step p of k) from a pointer and a stride `lda`:
// k-major at a[p * lda + r] (A stored [k, m], or a block of it packed), or row-major at
// a[r * lda + p] (A stored [m, k]).
enum class Layout { kDepthMajor, kRowMajor };

template <Layout kLayout>
inline float element(const float* a, int64_t lda, int64_t r, int64_t p) {
  return kLayout == Layout::kDepthMajor ? a[p * lda + r] : a[r * lda + p];
}

// C[kTileRows, kTileVectors vectors] (row stride ldc) (+)= A[kTileRows, k] · B[k, same columns],
// where A is laid out as kLayout says and B has row stride ldb and whole vectors. Of C's last
// vector only the first `last_lanes` columns are read and written. Each element's sum runs over
// p = 0..k-1 after C's previous value when adding.
template <int64_t kTileRows, int64_t kTileVectors, Store kStore, Layout kLayout>
inline void tile(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                 int64_t ldc, int64_t last_lanes) {
  constexpr int64_t kLast = kTileVectors - 1;
  const bool whole = last_lanes == kLanes;
  Vec acc[kTileRows][kTileVectors];
  for (int64_t r = 0; r < kTileRows; ++r) {
    for (int64_t v = 0; v < kTileVectors; ++v) {
      if constexpr (kStore == Store::kAdd) {
        const float* from = c + r * ldc + v * kLanes;
        acc[r][v] = v < kLast || whole ? load(from) : load_part(from, last_lanes);
      } else {
        acc[r][v] = broadcast(0.0f);
      }
    }
  }
  for (int64_t p = 0; p < k; ++p) {
    Vec row[kTileVectors];
    for (int64_t v = 0; v < kTileVectors; ++v) row[v] = load(b + p * ldb + v * kLanes);
    for (int64_t r = 0; r < kTileRows; ++r) {
      const Vec x = broadcast(element<kLayout>(a, lda, r, p));
      for (int64_t v = 0; v < kTileVectors; ++v) acc[r][v] = multiply_add(x, row[v], acc[r][v]);
    }
  }
  for (int64_t r = 0; r < kTileRows; ++r) {
    for (int64_t v = 0; v < kTileVectors; ++v) {
      float* to = c + r * ldc + v * kLanes;
      if (v == kLast && !whole) {
        store_part(to, acc[r][v], last_lanes);
      } else if constexpr (kStore == Store::kStream) {
        stream(to, acc[r][v]);
      } else {
        store(to, acc[r][v]);
      }
    }
  }
}

// tile() for `rows` <= kTileRows rows.
template <Store kStore, Layout kLayout, int64_t kTileVectors, int64_t kTileRows>
inline void tile_of(int64_t rows, int64_t k, const float* a, int64_t lda, const float* b,
                    int64_t ldb, float* c, int64_t ldc, int64_t last_lanes) {
  if constexpr (kTileRows > 1) {
    if (rows < kTileRows) {
      return tile_of<kStore, kLayout, kTileVectors, kTileRows - 1>(rows, k, a, lda, b, ldb, c, ldc,
                                                                   last_lanes);
    }
  }
  tile<kTileRows, kTileVectors, kStore, kLayout>(k, a, lda, b, ldb, c, ldc, last_lanes);
}

// Rows [0, rows) of a block, one column strip of kTileVectors vectors, in tiles at most as tall as
// keep kAccumulators accumulators and of even heights: a short last tile would leave too few
// independent sums to keep the multiply-adds busy.
template <Store kStore, Layout kLayout, int64_t kTileVectors>
void strip(int64_t rows, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
           float* c, int64_t ldc, int64_t last_lanes) {
  constexpr int64_t kTileRows = kAccumulators / kTileVectors;
  const int64_t tiles = (rows + kTileRows - 1) / kTileRows;
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t i = rows * t / tiles;
    const float* a_tile = kLayout == Layout::kDepthMajor ? a + i : a + i * lda;
    tile_of<kStore, kLayout, kTileVectors, kTileRows>(rows * (t + 1) / tiles - i, k, a_tile, lda, b,
                                                      ldb, c + i * ldc, ldc, last_lanes);
  }
}

// The strip of the columns past C's last whole tile: 1 to kVectors vectors, the last one holding
// `last_lanes` columns.
template <Store kStore, Layout kLayout>
void tail_strip(int64_t vectors, int64_t rows, int64_t k, const float* a, int64_t lda,
                const float* b, int64_t ldb, float* c, int64_t ldc, int64_t last_lanes) {
  static_assert(kVectors == 4);
  switch (vectors) {
    case 1:
      return strip<kStore, kLayout, 1>(rows, k, a, lda, b, ldb, c, ldc, last_lanes);
    case 2:
      return strip<kStore, kLayout, 2>(rows, k, a, lda, b, ldb, c, ldc, last_lanes);
    case 3:
      return strip<kStore, kLayout, 3>(rows, k, a, lda, b, ldb, c, ldc, last_lanes);
    default:
      return strip<kStore, kLayout, 4>(rows, k, a, lda, b, ldb, c, ldc, last_lanes);
  }
}

// The columns of C past the last whole tile, for rows [0, rows) and a chunk of k of `depth` steps,
// at most kSmallKMax · kCols floats of B. They read a copy of their slice of B padded with zeros to
// whole vectors, so that every load of B in the tiles' inner loop is a whole one.
template <Store kStore, Layout kLayout>
void tail_columns(int64_t rows, int64_t depth, int64_t n, int64_t full_cols, const float* a,
                  int64_t lda, const float* b, float* c) {
  const int64_t tail_cols = n - full_cols;
  const int64_t vectors = (tail_cols + kLanes - 1) / kLanes;
  const int64_t padded = vectors * kLanes;
  alignas(64) float b_tail[kSmallKMax * kCols];
  // An element at a time: a call to memcpy for a few floats per row would cost more.
  for (int64_t p = 0; p < depth; ++p) {
    const float* src = b + p * n + full_cols;
    float* dst = b_tail + p * padded;
    for (int64_t j = 0; j < padded; ++j) dst[j] = j < tail_cols ? src[j] : 0.0f;
  }
  // Streaming stores are for whole aligned rows only, which a tail strip does not have.
  constexpr Store kTailStore = kStore == Store::kStream ? Store::kOverwrite : kStore;
  tail_strip<kTailStore, kLayout>(vectors, rows, depth, a, lda, b_tail, padded, c + full_cols, n,
                                  tail_cols - (vectors - 1) * kLanes);
}

// Rows [r0, r1) of C for the chunk [p0, p1) of k. A C of one strip of columns reads A where it
// lies; a wider one, which reads each element of A once per strip, reads the block's rows of A
// (at most kBlockRows) packed as [k][kBlockRows] (16 KB at most), so that they stride through
// memory only once, in column panels.
template <Store kStore>
void block(bool transpose_a, int64_t r0, int64_t r1, int64_t p0, int64_t p1, int64_t m, int64_t n,
           int64_t k, const float* a, const float* b, float* c) {
  const int64_t rows = r1 - r0;
  const int64_t depth = p1 - p0;
  const float* b_chunk = b + p0 * n;
  float* c_block = c + r0 * n;
  const int64_t full_cols = n - n % kCols;
  if (n <= kCols) {
    if (transpose_a) {
      constexpr Layout kA = Layout::kDepthMajor;
      const float* a_block = a + p0 * m + r0;
      if (full_cols > 0) {
        strip<kStore, kA, kVectors>(rows, depth, a_block, m, b_chunk, n, c_block, n, kLanes);
      } else {
        tail_columns<kStore, kA>(rows, depth, n, 0, a_block, m, b_chunk, c_block);
      }
    } else {
      constexpr Layout kA = Layout::kRowMajor;
      const float* a_block = a + r0 * k + p0;
      if (full_cols > 0) {
        strip<kStore, kA, kVectors>(rows, depth, a_block, k, b_chunk, n, c_block, n, kLanes);
      } else {
        tail_columns<kStore, kA>(rows, depth, n, 0, a_block, k, b_chunk, c_block);
      }
    }
    return;
  }
  alignas(64) float packed_a[kSmallKMax * kBlockRows];
  for (int64_t p = 0; p < depth; ++p) {
    float* dst = packed_a + p * kBlockRows;
    if (transpose_a) {
      std::memcpy(dst, a + (p0 + p) * m + r0, static_cast<size_t>(rows) * sizeof(float));
    } else {
      for (int64_t i = 0; i < rows; ++i) dst[i] = a[(r0 + i) * k + p0 + p];
    }
  }
  constexpr Layout kPacked = Layout::kDepthMajor;
  const int64_t panel_cols =
      std::max(kCols, kPanelBytes / (depth * int64_t{sizeof(float)}) / kCols * kCols);
  for (int64_t j0 = 0; j0 < full_cols; j0 += panel_cols) {
    const int64_t j1 = std::min(full_cols, j0 + panel_cols);
    for (int64_t j = j0; j < j1; j += kCols) {
      strip<kStore, kPacked, kVectors>(rows, depth, packed_a, kBlockRows, b_chunk + j, n,
                                       c_block + j, n, kLanes);
    }
  }
  if (full_cols < n) {
    tail_columns<kStore, kPacked>(rows, depth, n, full_cols, packed_a, kBlockRows, b_chunk,
                                  c_block);
  }
}

}  // namespace tiles

// Rows [r0, r1) of C = op(A) · B (or C += ... when `accumulate`), with B stored [k, n] (not
// transposed) and k >= 1. Each element's sum runs over k in order, whatever the row range; the
// chunks of k after the first add to C.
void tile_gemm_rows(bool transpose_a, int64_t r0, int64_t r1, int64_t m, int64_t n, int64_t k,
                    const float* a, const float* b, float* c, bool accumulate) {
  using namespace tiles;
  // Streaming stores need every vector store aligned: C aligned and rows a whole number of vectors.
  const bool streamed = !accumulate && k <= kSmallKMax &&
                        m * n * int64_t{sizeof(float)} >= kStreamBytes && n % kLanes == 0 &&
                        reinterpret_cast<uintptr_t>(c) % (kLanes * sizeof(float)) == 0;
  // Where C is one strip, A is read where it lies, so all the rows make one block and the padded
  // copy of B's last columns is made once per chunk of k, a chunk as long as that copy allows.
  // Where A is packed, blocks of kBlockRows rows and chunks of kSmallKMax steps.
  const bool one_strip = n <= kCols;
  const int64_t block_rows = one_strip ? r1 - r0 : kBlockRows;
  const int64_t chunk =
      one_strip ? kSmallKMax * kCols / ((n + kLanes - 1) / kLanes * kLanes) : kSmallKMax;
  for (int64_t i = r0; i < r1; i += block_rows) {
    const int64_t i1 = std::min(r1, i + block_rows);
    for (int64_t p = 0; p < k; p += chunk) {
      const int64_t p1 = std::min(k, p + chunk);
      if (streamed) {
        block<Store::kStream>(transpose_a, i, i1, p, p1, m, n, k, a, b, c);
      } else if (accumulate || p > 0) {
        block<Store::kAdd>(transpose_a, i, i1, p, p1, m, n, k, a, b, c);
      } else {
        block<Store::kOverwrite>(transpose_a, i, i1, p, p1, m, n, k, a, b, c);
      }
    }
  }
  // Streaming stores are weakly ordered: make them visible before this task reports completion.
  if (streamed) _mm_sfence();
}

#endif  // SLUICE_SIMD

}  // namespace
}  // namespace sluice::internal
