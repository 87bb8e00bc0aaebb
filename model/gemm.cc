#include "sluice/model/gemm.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <atomic>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/model/direct_conv.h"
#include "sluice/model/direct_conv_kernels.h"
#include "sluice/model/gemm_kernel.h"
#include "sluice/model/gemm_tiles.h"
#include "sluice/model/max_pool.h"
#include "sluice/model/max_pool_kernels.h"

namespace sluice::internal {

#ifdef SLUICE_GEMM_X86
// model/gemm_avx2.cc and model/gemm_avx512.cc: the same kernels compiled for AVX2 + FMA and for
// AVX-512.
void gemm_rows_avx2(bool transpose_a, bool transpose_b, int64_t r0, int64_t r1, int64_t m,
                    int64_t n, int64_t k, const float* a, const float* b, float* c,
                    bool accumulate);
void tile_gemm_rows_avx2(bool transpose_a, int64_t r0, int64_t r1, int64_t m, int64_t n, int64_t k,
                         const float* a, const float* b, float* c, bool accumulate);
void gemm_rows_avx512(bool transpose_a, bool transpose_b, int64_t r0, int64_t r1, int64_t m,
                      int64_t n, int64_t k, const float* a, const float* b, float* c,
                      bool accumulate);
void tile_gemm_rows_avx512(bool transpose_a, int64_t r0, int64_t r1, int64_t m, int64_t n,
                           int64_t k, const float* a, const float* b, float* c, bool accumulate);
void direct_conv_forward_avx2(const DirectConv& g, const float* image, const float* padded_kernel,
                              float* scratch, float* out);
void direct_conv_kernel_gradient_avx2(const DirectConv& g, const float* image, const float* dout,
                                      float* scratch, float* gradient);
void direct_conv_forward_avx512(const DirectConv& g, const float* image, const float* padded_kernel,
                                float* scratch, float* out);
void direct_conv_kernel_gradient_avx512(const DirectConv& g, const float* image, const float* dout,
                                        float* scratch, float* gradient);
void direct_conv_input_gradient_avx2(const DirectConv& g, const float* dout,
                                     const float* window_kernel, float* dx);
void direct_conv_input_gradient_avx512(const DirectConv& g, const float* dout,
                                       const float* window_kernel, float* dx);
void max_pool_avx2(const MaxPool& g, const float* image, float* out, int32_t* arg);
void max_pool_avx512(const MaxPool& g, const float* image, float* out, int32_t* arg);
#endif

namespace {

using GemmRows = void (*)(bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, const float*,
                          const float*, float*, bool);
using TileRows = void (*)(bool, int64_t, int64_t, int64_t, int64_t, int64_t, const float*,
                          const float*, float*, bool);
// direct_conv.h's forward and kernel gradient: (geometry, image, kernel or dout, scratch, out).
using DirectConvKernel = void (*)(const DirectConv&, const float*, const float*, float*, float*);
// direct_conv.h's input gradient: (geometry, dout, window kernel, dx).
using DirectConvInputGradient = void (*)(const DirectConv&, const float*, const float*, float*);
using MaxPoolKernel = void (*)(const MaxPool&, const float*, float*, int32_t*);

// One instruction set's kernels. Without SIMD the own GEMM and convolution kernels are null, and
// max pooling compares one channel at a time.
struct Kernels {
  const char* name;
  GemmRows eigen;
  TileRows tiles;
  DirectConvKernel conv_forward;
  DirectConvKernel conv_gradient;
  DirectConvInputGradient conv_input_gradient;
  MaxPoolKernel max_pool;
};

#if SLUICE_SIMD
constexpr Kernels kBaseline{"baseline",
                            eigen_gemm_rows,
                            tile_gemm_rows,
                            direct_conv::forward,
                            direct_conv::kernel_gradient,
                            direct_conv::input_gradient,
                            max_pool_kernel::image_max};
#else
constexpr Kernels kBaseline{"baseline", eigen_gemm_rows,           nullptr, nullptr, nullptr,
                            nullptr,    max_pool_kernel::image_max};
#endif

// The kernels this CPU runs, narrowest first.
const std::vector<const Kernels*>& available_kernels() {
  static const std::vector<const Kernels*> available = [] {
    std::vector<const Kernels*> kernels{&kBaseline};
#ifdef SLUICE_GEMM_X86
    static constexpr Kernels kAvx2{"avx2",
                                   gemm_rows_avx2,
                                   tile_gemm_rows_avx2,
                                   direct_conv_forward_avx2,
                                   direct_conv_kernel_gradient_avx2,
                                   direct_conv_input_gradient_avx2,
                                   max_pool_avx2};
    static constexpr Kernels kAvx512{"avx512",
                                     gemm_rows_avx512,
                                     tile_gemm_rows_avx512,
                                     direct_conv_forward_avx512,
                                     direct_conv_kernel_gradient_avx512,
                                     direct_conv_input_gradient_avx512,
                                     max_pool_avx512};
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
      kernels.push_back(&kAvx2);
      if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw")) {
        kernels.push_back(&kAvx512);
      }
    }
#endif
    return kernels;
  }();
  return available;
}

std::atomic<const Kernels*> forced_kernels{nullptr};
std::atomic<bool> force_eigen{false};

const Kernels& kernels() {
  const Kernels* forced = forced_kernels.load(std::memory_order_relaxed);
  return forced != nullptr ? *forced : *available_kernels().back();
}

}  // namespace

const char* gemm_kernel_name() { return kernels().name; }

std::vector<std::string> gemm_kernel_names() {
  std::vector<std::string> names;
  for (const Kernels* k : available_kernels()) names.emplace_back(k->name);
  return names;
}

void force_gemm_kernel(std::string_view name) {
  const Kernels* chosen = nullptr;
  for (const Kernels* k : available_kernels()) {
    if (name == k->name) chosen = k;
  }
  if (!name.empty() && chosen == nullptr) {
    throw InvalidArgument(str_cat("no GEMM kernel '", name, "' on this CPU"));
  }
  forced_kernels.store(chosen, std::memory_order_relaxed);
}

void force_eigen_gemm(bool force) { force_eigen.store(force, std::memory_order_relaxed); }

void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a,
          const float* b, float* c, bool accumulate, bool parallel) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate) std::fill(c, c + m * n, 0.0f);
    return;
  }
  const Kernels& kernel = kernels();
  // A small inner dimension, or a narrow C, is what Eigen's kernel serves badly (gemm_tiles.h).
  const bool tiles = kernel.tiles != nullptr && !transpose_b &&
                     ((k <= kSmallKMax && !accumulate) || n <= kNarrowMax) &&
                     !force_eigen.load(std::memory_order_relaxed);
  auto rows = [&](int64_t r0, int64_t r1) {
    if (tiles) {
      kernel.tiles(transpose_a, r0, r1, m, n, k, a, b, c, accumulate);
    } else {
      kernel.eigen(transpose_a, transpose_b, r0, r1, m, n, k, a, b, c, accumulate);
    }
  };
  // Blocks of rows big enough to amortise GEMM packing; fixed so results never depend on threads.
  constexpr int64_t kRowBlock = 64;
  const double flops = 2.0 * double(m) * double(n) * double(k);
  if (!parallel || m < 2 * kRowBlock || flops < 4e6) {
    rows(0, m);
    return;
  }
  const int64_t blocks = (m + kRowBlock - 1) / kRowBlock;
  oneapi::tbb::parallel_for(oneapi::tbb::blocked_range<int64_t>(0, blocks, 1),
                            [&](const auto& range) {
                              for (int64_t block = range.begin(); block != range.end(); ++block) {
                                const int64_t r0 = block * kRowBlock;
                                rows(r0, std::min(m, r0 + kRowBlock));
                              }
                            });
}

// direct_conv.h's kernels, chosen with the GEMM's.
namespace {
std::atomic<bool> force_im2col{false};
}  // namespace

bool direct_conv_runs(const DirectConv& g) {
  // The padded image is read again by every tile: it should stay within L2.
  constexpr int64_t kPaddedMax = 64 * 1024;
  // As gemm() chooses the tile kernel for the product of patches [positions, taps] and kernel
  // [taps, filters] (it does not for the kernel gradient past kNarrowMax filters: Eigen's sums
  // run in another order there).
  const bool tile_product = g.taps() <= kSmallKMax || g.filters <= kNarrowMax;
  return kernels().conv_forward != nullptr && tile_product && g.padded_floats() <= kPaddedMax &&
         !force_im2col.load(std::memory_order_relaxed);
}

void force_conv_im2col(bool force) { force_im2col.store(force, std::memory_order_relaxed); }

void direct_conv_forward(const DirectConv& g, const float* image, const float* padded_kernel,
                         float* scratch, float* out) {
  kernels().conv_forward(g, image, padded_kernel, scratch, out);
}

void direct_conv_kernel_gradient(const DirectConv& g, const float* image, const float* dout,
                                 float* scratch, float* gradient) {
  kernels().conv_gradient(g, image, dout, scratch, gradient);
}

void direct_conv_input_gradient(const DirectConv& g, const float* dout, const float* window_kernel,
                                float* dx) {
  kernels().conv_input_gradient(g, dout, window_kernel, dx);
}

void max_pool(const MaxPool& g, const float* image, float* out, int32_t* arg) {
  kernels().max_pool(g, image, out, arg);
}

}  // namespace sluice::internal
