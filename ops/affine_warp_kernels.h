// The bodies of the affine warp kernels (ops/affine_warp.h). A source file includes this once per
// instruction set it is compiled for: everything here has internal linkage, so each build keeps
// its own copy, and the file's `kAffineWarpKernels` gathers that copy's entry points.
// (No include guard: only those source files include it, once each.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sluice/ops/affine_warp.h"

namespace sluice::internal {
namespace {

// A coordinate along one axis resolved to the two neighbours of a bilinear blend, as scipy's
// order-1 interpolation with its boundary modes does (checked against scipy point by point).
struct Axis {
  int64_t i0 = 0;
  int64_t i1 = 0;
  double f = 0;  // Weight of i1.
  bool valid = true;
};

// scipy decides "outside" on coordinates it computes itself; a hair of tolerance keeps a point
// that lands on the edge up to rounding inside, as it is in exact arithmetic.
constexpr double kEdgeTolerance = 1e-9;

Axis clamped(double c, int64_t n) {
  c = std::clamp(c, 0.0, static_cast<double>(n - 1));
  Axis a;
  a.i0 = static_cast<int64_t>(c);
  a.f = c - static_cast<double>(a.i0);
  a.i1 = std::min(a.i0 + 1, n - 1);
  return a;
}

int64_t symmetric(int64_t i, int64_t n) {
  const int64_t period = 2 * n;
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - 1 - i;
}

Axis resolve(double c, int64_t n, FillMode mode) {
  switch (mode) {
    case FillMode::kNearest:
      return clamped(c, n);
    case FillMode::kConstant:
      if (c < -kEdgeTolerance || c > static_cast<double>(n - 1) + kEdgeTolerance) {
        return Axis{0, 0, 0, false};
      }
      return clamped(c, n);
    case FillMode::kReflect: {
      const double floor_c = std::floor(c);
      const auto i = static_cast<int64_t>(floor_c);
      return Axis{symmetric(i, n), symmetric(i + 1, n), c - floor_c, true};
    }
    case FillMode::kWrap: {
      if (n <= 1) return Axis{0, 0, 0, true};
      // scipy's "wrap": period n - 1, so the first and the last sample coincide.
      const auto size = static_cast<double>(n - 1);
      if (c < 0) {
        c += size * (std::trunc(-c / size) + 1);
      } else if (c > size) {
        c -= size * std::trunc(c / size);
      }
      return clamped(c, n);
    }
  }
  return clamped(c, n);
}

// Fixed-point weights of the uint8 path: 11 bits, so the two-stage blend of 8-bit values stays
// within 31 bits (255 · 2^11 · 2^11 < 2^31).
constexpr int kBits = 11;
constexpr int kOne = 1 << kBits;
constexpr int kShift = 2 * kBits;

int fixed_weight(double f) { return static_cast<int>(f * kOne + 0.5); }

// Blends the four neighbours of `channels` values each into `out`.
template <int kC, class Out>
inline void blend(const uint8_t* p00, const uint8_t* p01, const uint8_t* p10, const uint8_t* p11,
                  double fx, double fy, int64_t channels, float scale, Out* out) {
  const int wx = fixed_weight(fx);
  const int wy = fixed_weight(fy);
  const int64_t n = kC > 0 ? kC : channels;
  for (int64_t k = 0; k < n; ++k) {
    const int top = p00[k] * (kOne - wx) + p01[k] * wx;
    const int bottom = p10[k] * (kOne - wx) + p11[k] * wx;
    const int v = top * (kOne - wy) + bottom * wy;
    if constexpr (std::is_same_v<Out, uint8_t>) {
      out[k] = static_cast<uint8_t>((v + (1 << (kShift - 1))) >> kShift);
    } else {
      out[k] = static_cast<float>(v) * scale;  // scale includes 2^-kShift.
    }
  }
}

template <int kC, class Out>
inline void blend(const float* p00, const float* p01, const float* p10, const float* p11, double fx,
                  double fy, int64_t channels, float scale, Out* out) {
  const auto wx = static_cast<float>(fx);
  const auto wy = static_cast<float>(fy);
  const int64_t n = kC > 0 ? kC : channels;
  for (int64_t k = 0; k < n; ++k) {
    const float top = p00[k] + wx * (p01[k] - p00[k]);
    const float bottom = p10[k] + wx * (p11[k] - p10[k]);
    out[k] = (top + wy * (bottom - top)) * scale;
  }
}

// One image: every output pixel's input position is found incrementally along its row; pixels
// whose four neighbours are inside the input (nearly all) take the direct path, the rest resolve
// each axis with the fill mode.
template <int kC, class In, class Out>
void resample(const In* src, int64_t height, int64_t width, int64_t channels,
              const AffineMatrix& matrix, FillMode mode, Out fill, float scale, Out* dst) {
  const double* m = matrix.m;
  const int64_t c = kC > 0 ? kC : channels;
  const int64_t row_stride = width * c;
  const auto last_row = static_cast<double>(height - 1);
  const auto last_col = static_cast<double>(width - 1);
  for (int64_t r = 0; r < height; ++r) {
    const double y0 = m[0] * static_cast<double>(r) + m[2];
    const double x0 = m[3] * static_cast<double>(r) + m[5];
    Out* out = dst + r * row_stride;
    for (int64_t col = 0; col < width; ++col, out += c) {
      const double y = y0 + m[1] * static_cast<double>(col);
      const double x = x0 + m[4] * static_cast<double>(col);
      if (y >= 0 && y < last_row && x >= 0 && x < last_col) {
        const auto i = static_cast<int64_t>(y);
        const auto j = static_cast<int64_t>(x);
        const In* p = src + i * row_stride + j * c;
        blend<kC>(p, p + c, p + row_stride, p + row_stride + c, x - static_cast<double>(j),
                  y - static_cast<double>(i), c, scale, out);
        continue;
      }
      const Axis ay = resolve(y, height, mode);
      const Axis ax = resolve(x, width, mode);
      if (!ay.valid || !ax.valid) {
        for (int64_t k = 0; k < c; ++k) out[k] = fill;
        continue;
      }
      const In* r0 = src + ay.i0 * row_stride;
      const In* r1 = src + ay.i1 * row_stride;
      blend<kC>(r0 + ax.i0 * c, r0 + ax.i1 * c, r1 + ax.i0 * c, r1 + ax.i1 * c, ax.f, ay.f, c,
                scale, out);
    }
  }
}

constexpr double kFixedOne = 4294967296.0;  // 2^32.

// The columns col in [begin, end) with 0 <= x0 + col * dx < limit (a run, as x is linear).
void interior_columns(int64_t x0, int64_t dx, int64_t limit, int64_t width, int64_t& begin,
                      int64_t& end) {
  auto inside = [&](int64_t col) {
    const int64_t x = x0 + col * dx;
    return x >= 0 && x < limit;
  };
  // The run is short to find by stepping from a close analytic guess; the guess only has to be
  // near, the checks make it exact.
  if (dx == 0) {
    begin = 0;
    end = inside(0) ? width : 0;
    return;
  }
  const double lo = -static_cast<double>(x0) / static_cast<double>(dx);
  const double hi = static_cast<double>(limit - x0) / static_cast<double>(dx);
  const double first = std::clamp(std::ceil(std::min(lo, hi)) - 1, 0.0, static_cast<double>(width));
  const double last = std::clamp(std::floor(std::max(lo, hi)) + 1, 0.0, static_cast<double>(width));
  begin = static_cast<int64_t>(first);
  end = static_cast<int64_t>(last);
  while (begin < end && !inside(begin)) ++begin;
  while (end > begin && !inside(end - 1)) --end;
}

// The common Keras case without rotation (shear, zoom, shift, flips): the input row of an output
// row does not depend on the column (m[1] == 0). Each output row then blends its two input rows
// once into a float row, already scaled, and each pixel is a single linear blend along that row.
template <int kC, class In>
void resample_rows_to_float(const In* src, int64_t height, int64_t width, int64_t channels,
                            const AffineMatrix& matrix, FillMode mode, float fill, float scale,
                            float* dst) {
  const double* m = matrix.m;
  const int64_t c = kC > 0 ? kC : channels;
  const int64_t row_stride = width * c;
  // One blended row (+ padding for the four-lane reads) and two input rows converted to float:
  // with a zoom near 1, consecutive output rows read mostly the same input rows, so each is
  // converted about once instead of twice. Reused, so no allocation per image.
  const auto padded = static_cast<size_t>(row_stride) + 4;
  thread_local std::vector<float> rows;
  rows.resize(3 * padded);
  float* t = rows.data();
  float* const converted[2] = {t + padded, t + 2 * padded};
  int64_t converted_row[2] = {-1, -1};
  // Input row i as float (exact for uint8), converting it into the slot not holding `keep`.
  const auto float_row = [&](int64_t i, int64_t keep) -> const float* {
    const In* in = src + i * row_stride;
    if constexpr (std::is_same_v<In, float>) {
      return in;
    } else {
      for (int k = 0; k < 2; ++k) {
        if (converted_row[k] == i) return converted[k];
      }
      const int k = converted_row[0] == keep ? 1 : 0;
      for (int64_t j = 0; j < row_stride; ++j) converted[k][j] = static_cast<float>(in[j]);
      converted_row[k] = i;
      return converted[k];
    }
  };
  for (int64_t r = 0; r < height; ++r) {
    float* out = dst + r * row_stride;
    const Axis ay = resolve(m[0] * static_cast<double>(r) + m[2], height, mode);
    if (!ay.valid) {
      std::fill(out, out + row_stride, fill);
      continue;
    }
    const float* r0 = float_row(ay.i0, ay.i1);
    const float* r1 = float_row(ay.i1, ay.i0);
    const auto wy = static_cast<float>(ay.f);
    const float s0 = scale * (1 - wy);
    const float s1 = scale * wy;
    for (int64_t k = 0; k < row_stride; ++k) t[k] = r0[k] * s0 + r1[k] * s1;
    // Column positions in 32.32 fixed point: exact integer steps, so the columns whose two
    // neighbours are inside ([begin, end)) follow from integer arithmetic and need no test.
    const int64_t x0 = std::llround((m[3] * static_cast<double>(r) + m[5]) * kFixedOne);
    const int64_t dx = std::llround(m[4] * kFixedOne);
    const int64_t limit = (width - 1) << 32;  // Interior: 0 <= x < limit.
    int64_t begin = 0, end = 0;
    interior_columns(x0, dx, limit, width, begin, end);
    // A column outside the interior: x < 0 or x >= width - 1. Under kNearest (Keras' default)
    // that clamps to the first or the last column with weight 0, as resolve() would find.
    auto edge = [&](int64_t col) {
      float* o = out + col * c;
      const int64_t x = x0 + col * dx;
      const Axis ax = mode == FillMode::kNearest
                          ? Axis{x < 0 ? 0 : width - 1,
                                 x < 0 ? std::min<int64_t>(1, width - 1) : width - 1, 0, true}
                          : resolve(static_cast<double>(x) / kFixedOne, width, mode);
      if (!ax.valid) {
        for (int64_t k = 0; k < c; ++k) o[k] = fill;
        return;
      }
      const auto wx = static_cast<float>(ax.f);
      const float* p0 = t + ax.i0 * c;
      const float* p1 = t + ax.i1 * c;
      for (int64_t k = 0; k < c; ++k) o[k] = p0[k] + wx * (p1[k] - p0[k]);
    };
    for (int64_t col = 0; col < begin; ++col) edge(col);
    int64_t x = x0 + begin * dx;
    float* o = out + begin * c;
    int64_t col = begin;
#if defined(__SSE2__)
    if constexpr (kC == 3) {
      // Four lanes per pixel: the fourth is the next pixel's first channel, written again (with
      // its right value) by the next pixel; the run stops one pixel early so the last store
      // stays inside the row. The blended row has padding for the fourth lane of the reads.
      const auto lerp = [&](__m128 wx) {
        const float* p0 = t + (x >> 32) * 3;
        const __m128 a = _mm_loadu_ps(p0);
        const __m128 b = _mm_loadu_ps(p0 + 3);
        _mm_storeu_ps(o, _mm_add_ps(a, _mm_mul_ps(wx, _mm_sub_ps(b, a))));
        x += dx;
        o += 3;
      };
      // The weights of four columns at once: a weight is the top 24 bits of the fraction (the low
      // 32 bits of x), which four 32-bit lanes step exactly, wrapping as the fractions do.
      const auto f = static_cast<uint32_t>(x), step = static_cast<uint32_t>(dx);
      __m128i fractions =
          _mm_set_epi32(static_cast<int>(f + 3 * step), static_cast<int>(f + 2 * step),
                        static_cast<int>(f + step), static_cast<int>(f));
      const __m128i step4 = _mm_set1_epi32(static_cast<int>(4 * step));
      const __m128 unit = _mm_set1_ps(1.0f / (1 << 24));
      for (; col + 4 < end; col += 4) {
        const __m128 w = _mm_mul_ps(_mm_cvtepi32_ps(_mm_srli_epi32(fractions, 8)), unit);
        fractions = _mm_add_epi32(fractions, step4);
        lerp(_mm_shuffle_ps(w, w, 0x00));
        lerp(_mm_shuffle_ps(w, w, 0x55));
        lerp(_mm_shuffle_ps(w, w, 0xAA));
        lerp(_mm_shuffle_ps(w, w, 0xFF));
      }
      for (; col + 1 < end; ++col) {
        lerp(_mm_set1_ps(static_cast<float>(static_cast<uint32_t>(x) >> 8) * (1.0f / (1 << 24))));
      }
    }
#endif
    for (; col < end; ++col, x += dx, o += c) {
      const float* p0 = t + (x >> 32) * c;
      const float wx = static_cast<float>(static_cast<uint32_t>(x) >> 8) * (1.0f / (1 << 24));
      for (int64_t k = 0; k < c; ++k) o[k] = p0[k] + wx * (p0[c + k] - p0[k]);
    }
    for (int64_t col = end; col < width; ++col) edge(col);
  }
}

template <class In>
void resample_rows_any(const In* src, int64_t height, int64_t width, int64_t channels,
                       const AffineMatrix& matrix, FillMode mode, float fill, float scale,
                       float* dst) {
  switch (channels) {
    case 1:
      return resample_rows_to_float<1>(src, height, width, channels, matrix, mode, fill, scale,
                                       dst);
    case 3:
      return resample_rows_to_float<3>(src, height, width, channels, matrix, mode, fill, scale,
                                       dst);
    default:
      return resample_rows_to_float<0>(src, height, width, channels, matrix, mode, fill, scale,
                                       dst);
  }
}

template <class In, class Out>
void resample_any(const In* src, int64_t height, int64_t width, int64_t channels,
                  const AffineMatrix& matrix, FillMode mode, Out fill, float scale, Out* dst) {
  switch (channels) {
    case 1:
      return resample<1>(src, height, width, channels, matrix, mode, fill, scale, dst);
    case 3:
      return resample<3>(src, height, width, channels, matrix, mode, fill, scale, dst);
    case 4:
      return resample<4>(src, height, width, channels, matrix, mode, fill, scale, dst);
    default:
      return resample<0>(src, height, width, channels, matrix, mode, fill, scale, dst);
  }
}

// out = src * scale. The output (four bytes per pixel value) is usually a slot of a large batch
// that is not read again soon: streaming stores skip reading each cache line before writing it,
// which halves the memory traffic of this bandwidth-bound loop.
void convert_u8_to_float(const uint8_t* src, int64_t n, float scale, float* out) {
  int64_t i = 0;
#if defined(__SSE2__)
  while (i < n && (reinterpret_cast<uintptr_t>(out + i) & 15) != 0) {
    out[i] = static_cast<float>(src[i]) * scale;
    ++i;
  }
  const __m128 s = _mm_set1_ps(scale);
  const __m128i zero = _mm_setzero_si128();
  for (; i + 16 <= n; i += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i lo = _mm_unpacklo_epi8(bytes, zero);
    const __m128i hi = _mm_unpackhi_epi8(bytes, zero);
    _mm_stream_ps(out + i, _mm_mul_ps(_mm_cvtepi32_ps(_mm_unpacklo_epi16(lo, zero)), s));
    _mm_stream_ps(out + i + 4, _mm_mul_ps(_mm_cvtepi32_ps(_mm_unpackhi_epi16(lo, zero)), s));
    _mm_stream_ps(out + i + 8, _mm_mul_ps(_mm_cvtepi32_ps(_mm_unpacklo_epi16(hi, zero)), s));
    _mm_stream_ps(out + i + 12, _mm_mul_ps(_mm_cvtepi32_ps(_mm_unpackhi_epi16(hi, zero)), s));
  }
  _mm_sfence();
#endif
  for (; i < n; ++i) out[i] = static_cast<float>(src[i]) * scale;
}

// The entry points.

void warp_u8(const uint8_t* src, int64_t height, int64_t width, int64_t channels,
             const AffineMatrix& matrix, FillMode mode, uint8_t fill, uint8_t* dst) {
  resample_any(src, height, width, channels, matrix, mode, fill, 0.0f, dst);
}

void warp_float(const float* src, int64_t height, int64_t width, int64_t channels,
                const AffineMatrix& matrix, FillMode mode, float fill, float* dst) {
  resample_any(src, height, width, channels, matrix, mode, fill, 1.0f, dst);
}

void warp_u8_to_float(const uint8_t* src, int64_t height, int64_t width, int64_t channels,
                      const AffineMatrix& matrix, FillMode mode, float cval, float scale,
                      float* dst) {
  if (matrix.is_identity()) {
    convert_u8_to_float(src, height * width * channels, scale, dst);
  } else if (matrix.m[1] == 0) {
    resample_rows_any(src, height, width, channels, matrix, mode, cval * scale, scale, dst);
  } else {
    resample_any(src, height, width, channels, matrix, mode, cval * scale,
                 scale / static_cast<float>(int64_t{1} << kShift), dst);
  }
}

void warp_float_to_float(const float* src, int64_t height, int64_t width, int64_t channels,
                         const AffineMatrix& matrix, FillMode mode, float cval, float scale,
                         float* dst) {
  if (matrix.is_identity()) {
    const int64_t n = height * width * channels;
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i] * scale;
  } else if (matrix.m[1] == 0) {
    resample_rows_any(src, height, width, channels, matrix, mode, cval * scale, scale, dst);
  } else {
    resample_any(src, height, width, channels, matrix, mode, cval * scale, scale, dst);
  }
}

}  // namespace
}  // namespace sluice::internal
