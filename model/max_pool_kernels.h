// max_pool.h's kernel, for the instruction set of the including file: compiled by gemm.cc for the
// baseline, by gemm_avx2.cc and by gemm_avx512.cc, with internal linkage like the other kernels.
// A window's channels are compared a vector at a time, without a branch on the data: mispredicted
// branches on random activations were most of the pooling time.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "sluice/model/max_pool.h"
#include "sluice/model/simd.h"

namespace sluice::internal {
namespace {
namespace max_pool_kernel {

using Span = WindowGeometry::Span;

// Whether v replaces the running maximum m: strictly greater keeps the first maximum, and a NaN
// wins over a number.
inline bool replaces(float v, float m) { return (v > m) || (std::isnan(v) && !std::isnan(m)); }

// Channel ch's maximum over the window rows × columns of an image `width` pixels wide.
inline void channel_max(const float* image, int64_t width, int64_t channels, Span rows,
                        Span columns, int64_t ch, float* out, int32_t* arg) {
  int64_t a = (rows.begin * width + columns.begin) * channels + ch;
  float m = image[a];
  for (int64_t iy = rows.begin; iy < rows.end; ++iy) {
    for (int64_t ix = columns.begin; ix < columns.end; ++ix) {
      const int64_t i = (iy * width + ix) * channels + ch;
      if (replaces(image[i], m)) m = image[i], a = i;
    }
  }
  out[ch] = m;
  arg[ch] = static_cast<int32_t>(a);
}

#if SLUICE_SIMD
using namespace simd;

// replaces() for a vector of channels: "v > m or v is NaN" is "not v <= m" (true when unordered),
// over a maximum that is not NaN.
#if defined(__AVX512F__)
using Index = __m512i;
using Mask = __mmask16;
inline Mask replaces(Vec v, Vec m) {
  return _mm512_cmp_ps_mask(v, m, _CMP_NLE_UQ) & _mm512_cmp_ps_mask(m, m, _CMP_ORD_Q);
}
inline Vec choose(Mask take, Vec keep, Vec v) { return _mm512_mask_mov_ps(keep, take, v); }
inline Index choose(Mask take, Index keep, Index v) { return _mm512_mask_mov_epi32(keep, take, v); }
inline Index lane_indices(int64_t first) {
  return _mm512_add_epi32(_mm512_set1_epi32(static_cast<int32_t>(first)),
                          _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}
inline void store_indices(int32_t* p, Index a) { _mm512_storeu_si512(p, a); }
inline void store_index_part(int32_t* p, Index a, int64_t lanes) {
  _mm512_mask_storeu_epi32(p, first_lanes(lanes), a);
}
#elif defined(__AVX2__)
using Index = __m256i;
using Mask = __m256;
inline Mask replaces(Vec v, Vec m) {
  return _mm256_and_ps(_mm256_cmp_ps(v, m, _CMP_NLE_UQ), _mm256_cmp_ps(m, m, _CMP_ORD_Q));
}
inline Vec choose(Mask take, Vec keep, Vec v) { return _mm256_blendv_ps(keep, v, take); }
inline Index choose(Mask take, Index keep, Index v) {
  return _mm256_castps_si256(
      _mm256_blendv_ps(_mm256_castsi256_ps(keep), _mm256_castsi256_ps(v), take));
}
inline Index lane_indices(int64_t first) {
  return _mm256_add_epi32(_mm256_set1_epi32(static_cast<int32_t>(first)),
                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline void store_indices(int32_t* p, Index a) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), a);
}
#else
using Index = __m128i;
using Mask = __m128;
inline Mask replaces(Vec v, Vec m) { return _mm_and_ps(_mm_cmpnle_ps(v, m), _mm_cmpord_ps(m, m)); }
// Lanes of v where `take` is set, else of keep.
inline Vec choose(Mask take, Vec keep, Vec v) {
#if defined(__SSE4_1__)
  return _mm_blendv_ps(keep, v, take);
#else
  return _mm_or_ps(_mm_and_ps(take, v), _mm_andnot_ps(take, keep));
#endif
}
inline Index choose(Mask take, Index keep, Index v) {
  return _mm_castps_si128(choose(take, _mm_castsi128_ps(keep), _mm_castsi128_ps(v)));
}
inline Index lane_indices(int64_t first) {
  return _mm_add_epi32(_mm_set1_epi32(static_cast<int32_t>(first)), _mm_setr_epi32(0, 1, 2, 3));
}
inline void store_indices(int32_t* p, Index a) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), a);
}
#endif

#if !defined(__AVX512F__)
// Without masked stores, as simd.h's store_part: through a whole vector on the stack.
inline void store_index_part(int32_t* p, Index a, int64_t lanes) {
  alignas(64) int32_t whole[kLanes];
  store_indices(whole, a);
  std::memcpy(p, whole, static_cast<size_t>(lanes) * sizeof(int32_t));
}
#endif

// The `lanes` channels at p: a whole vector when kWhole (lanes == kLanes).
template <bool kWhole>
inline Vec load_channels(const float* p, int64_t lanes) {
  if constexpr (kWhole) return load(p);
  return load_part(p, lanes);
}

// The running maxima m and their indices a take the `lanes` channels at `place` where they
// replace them.
template <bool kWhole>
inline void take(const float* image, int64_t place, int64_t lanes, Vec& m, Index& a) {
  const Vec v = load_channels<kWhole>(image + place, lanes);
  const Mask replace = replaces(v, m);
  m = choose(replace, m, v);
  a = choose(replace, a, lane_indices(place));
}

// channel_max() for channels [ch, ch + lanes) at once: lanes == kLanes when kWhole, else fewer.
template <bool kWhole>
inline void channels_max(const float* image, int64_t width, int64_t channels, Span rows,
                         Span columns, int64_t ch, int64_t lanes, float* out, int32_t* arg) {
  const int64_t first = (rows.begin * width + columns.begin) * channels + ch;
  Vec m = load_channels<kWhole>(image + first, lanes);
  Index a = lane_indices(first);
  if (rows.end - rows.begin == 2 && columns.end - columns.begin == 2) {
    // The common 2×2 window, unrolled: the same comparisons in the same order, without the loops'
    // bookkeeping.
    take<kWhole>(image, first + channels, lanes, m, a);
    take<kWhole>(image, first + width * channels, lanes, m, a);
    take<kWhole>(image, first + (width + 1) * channels, lanes, m, a);
  } else {
    for (int64_t iy = rows.begin; iy < rows.end; ++iy) {
      for (int64_t ix = columns.begin; ix < columns.end; ++ix) {
        const int64_t place = (iy * width + ix) * channels + ch;
        if (place != first) take<kWhole>(image, place, lanes, m, a);
      }
    }
  }
  if constexpr (kWhole) {
    store(out + ch, m);
    store_indices(arg + ch, a);
  } else {
    store_part(out + ch, m, lanes);
    store_index_part(arg + ch, a, lanes);
  }
}
#endif

// Every channel of one output pixel. Vectors of channels, the last one overlapping the one before
// (storing the same values again) when the channels are not a multiple of the lanes; fewer
// channels than a vector take a part of one where masks allow it, else one at a time.
inline void pixel_max(const float* image, int64_t width, int64_t channels, Span rows, Span columns,
                      float* out, int32_t* arg) {
#if SLUICE_SIMD
  if (channels >= kLanes) {
    for (int64_t ch = 0; ch < channels; ch += kLanes) {
      channels_max<true>(image, width, channels, rows, columns, std::min(ch, channels - kLanes),
                         kLanes, out, arg);
    }
    return;
  }
#endif
#if SLUICE_SIMD && defined(__AVX512F__)
  channels_max<false>(image, width, channels, rows, columns, 0, channels, out, arg);
#else
  for (int64_t ch = 0; ch < channels; ++ch) {
    channel_max(image, width, channels, rows, columns, ch, out, arg);
  }
#endif
}

void image_max(const MaxPool& g, const float* image, float* out, int32_t* arg) {
  const int64_t width = g.columns.input, channels = g.channels;
  for (int64_t oy = 0; oy < g.rows.output; ++oy) {
    const Span rows = g.rows.span(oy);
    for (int64_t ox = 0; ox < g.columns.output; ++ox) {
      const int64_t o = (oy * g.columns.output + ox) * channels;
      pixel_max(image, width, channels, rows, g.columns.span(ox), out + o, arg + o);
    }
  }
}

}  // namespace max_pool_kernel
}  // namespace
}  // namespace sluice::internal
